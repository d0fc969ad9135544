// The subcommands of the clustertrain binary, one file each in this folder. Add<Name>Command
// registers the subcommand and its options on the CLI11 app and returns how to run it once the
// command line is parsed; main.cpp runs the one the user chose.
#pragma once

#include <CLI/CLI.hpp>

#include <functional>
#include <string>
#include <vector>

#include "cluster/mpi_world.h"
#include "util/config.h"

namespace ct {

struct Command {
  CLI::App* cli = nullptr;              // chosen when *cli is true after parsing
  std::function<int(int, char**)> run;  // (argc, argv) -> the process's exit code
};

Command AddTrainCommand(CLI::App& app);
Command AddMakeDataCommand(CLI::App& app);
Command AddConvertCommand(CLI::App& app);
Command AddPredictCommand(CLI::App& app);
Command AddInfoCommand(CLI::App& app);
Command AddBenchCommand(CLI::App& app);
Command AddTraceCommand(CLI::App& app);

// What a stop signal (SIGTERM, SIGUSR1, Ctrl-C) does: training stops at its next step with a
// checkpoint (cluster/preemption.h); any other command ends at once, removing the temporary
// file it was writing (util/unfinished_file.h).
enum class StopSignals { kEndAtOnce, kStopTrainingAtAStep };

// The fatal path (main.cpp): starts MPI, runs `body`, and ends every rank with one message
// if anything throws on any rank. Returns the exit code.
int RunWithMpi(int argc, char** argv, const std::function<void(const MpiWorld&)>& body,
               StopSignals stop = StopSignals::kEndAtOnce);

// Before MPI starts (common.cpp): an error in the command line or the config. Printed by the
// process itself when it runs alone; under a launcher of several, every rank starts MPI and the
// ranks agree (cluster/agree.h): printed once, by rank 0, or per rank where ranks differ, and every
// rank ends at once whatever the launcher does. Returns `code` (or ends the process with it).
int ReportEarlyError(const std::string& message, int code);

// Why an output file cannot be written ("" when it can), so that every rank does not meet it
// inside HDF5 and say so in HDF5's words: it exists (without `force`), is a directory, has no
// writable directory, or is one of the command's `inputs` (whatever `force` says).
std::string OutputFileProblem(const std::string& path, bool force, const std::string& if_exists,
                              const std::vector<std::string>& inputs = {});

// Option checks whose messages a user can read (CLI11's own print the whole range of a double):
// a number >= 1, and a finite number >= 0 (NaN and infinity refused).
CLI::Validator AtLeastOne();
CLI::Validator FiniteNonNegative();
// An input file that exists and is a regular file: a FIFO would block the open, a device read
// forever (CLI::ExistingFile lets both through).
CLI::Validator RegularFile();
// A whole number >= 0 that fits 64 bits (seeds): "-1" refused, not wrapped.
CLI::Validator WholeNumber();

// `typed` itself when it is a subcommand; else the closest one, for "did you mean 'train'?" ("" if
// none is close).
std::string ClosestSubcommand(const CLI::App& app, const std::string& typed);

// "" when argv's command words (train; bench step) name subcommands of `app`; else the message
// for the first that does not: "unknown command 'bench iox'; did you mean 'bench io'? ...".
std::string MistypedCommand(const CLI::App& app, int argc, char** argv);

// The config file with its --set overrides (and, with check_inputs, its data files checked),
// into `config`. Returns 0, or the exit code of an error it reported.
int LoadConfigBeforeMpi(const std::string& path, const std::vector<std::string>& overrides, bool check_inputs,
                        Config& config);

// runtime.bind=auto: re-executes this process without OpenMP affinity variables (before any
// OpenMP thread exists); returns unless it re-executes.
void DropOpenMpAffinity(const Config& config, char** argv);

}  // namespace ct
