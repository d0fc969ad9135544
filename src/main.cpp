// clustertrain: data-parallel training of scientific models on GPU clusters.
//
// Command-line and config errors are found before MPI starts and printed once (by the rank the
// launcher calls 0). After that, one fatal path: any error on any rank is logged with its rank
// and host, communicators are aborted, and MPI_Abort ends every rank of the job. The
// subcommands live in src/cmd/, one file each.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <memory>
#include <vector>

#include "cluster/mpi_world.h"
#include "cluster/preemption.h"
#include "cmd/command.h"
#include "comm/communicator.h"
#include "comm/make_communicator.h"
#include "util/error.h"
#include "util/launcher_env.h"
#include "util/logging.h"
#include "util/malloc_tuning.h"
#include "util/startup_deadline.h"

namespace ct {

// The fatal path (cmd/command.h).
int RunWithMpi(int argc, char** argv, const std::function<void(const MpiWorld&)>& body) {
  std::unique_ptr<MpiWorld> world_ptr;
  try {
    StartupPhase("in MPI_Init");
    world_ptr = std::make_unique<MpiWorld>(&argc, &argv);
    StartupPhase("in the first collective");
  } catch (const Error& e) {
    std::fprintf(stderr, "clustertrain: error: %s\n", e.what());
    MPI_Abort(MPI_COMM_WORLD, e.ExitCode());
    return e.ExitCode();
  }
  const MpiWorld& world = *world_ptr;
  InitConsoleLogging(world.Rank());
  InstallPreemptionHandlers();  // after MPI_Init, which may install handlers of its own
  try {
    const std::string singleton = SingletonError(world.Size(), LauncherWorldSize());
    if (!singleton.empty()) throw CommError(singleton);
    body(world);
    return kExitOk;
  } catch (const Preempted& e) {
    // All ranks agreed to stop at the same step: a clean exit, no abort.
    if (world.Rank() == 0) spdlog::warn("{}", e.what());
    return e.ExitCode();
  } catch (const std::exception& e) {
    const auto* error = dynamic_cast<const Error*>(&e);
    const int code = error ? error->ExitCode() : IsOutOfMemory(e) ? kExitUsage : kExitFailure;
    const std::string text = ExceptionText(e);  // never a C++ stack trace
    if (error && error->Agreed()) {
      // Every rank has this error: one message, from rank 0 (the rest only in their log files).
      if (world.Rank() == 0)
        spdlog::error("{}", text);
      else
        spdlog::debug("{} ({})", text, ProcessIdentity());
    } else {
      spdlog::error("{} ({})", text, ProcessIdentity());
    }
    spdlog::default_logger()->flush();
    AbortAllCommunicators();
    if (world.Size() > 1) world.Abort(code);  // ends every rank, not just this one
    return code;
  }
}

}  // namespace ct

int main(int argc, char** argv) {
  ct::TuneMallocForTraining();  // before anything large is allocated
  CLI::App app{"clustertrain " CT_VERSION
               ": data-parallel trainer for scientific models (one process per GPU or core group).\n"
               "Launch with mpirun or srun; every subcommand also runs as a single process.\n"
               "Communication backends built: " +
               ct::BuiltBackends()};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("clustertrain ") + CT_VERSION);
  const std::vector<ct::Command> commands = {ct::AddTrainCommand(app),   ct::AddMakeDataCommand(app),
                                             ct::AddConvertCommand(app), ct::AddPredictCommand(app),
                                             ct::AddInfoCommand(app),    ct::AddBenchCommand(app)};
  // A mistyped command or sub-command (bench iox): CLI11 alone would say only "A subcommand is
  // required".
  if (const std::string problem = ct::MistypedCommand(app, argc, argv); !problem.empty()) {
    return ct::ReportEarlyError(problem, ct::kExitUsage);
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return ct::IsLauncherRankZero() ? app.exit(e) : 0;  // --help, --version
    if (!ct::IsLauncherRankZero()) return ct::ReportEarlyError(e.what(), ct::kExitUsage);
    app.exit(e);
    return ct::kExitUsage;
  }
  for (const ct::Command& command : commands) {
    if (*command.cli) return command.run(argc, argv);
  }
  return ct::kExitUsage;  // require_subcommand(1) makes this unreachable
}
