// clustertrain: data-parallel training of scientific models on GPU clusters.
//
// Command-line and config errors are found before MPI starts and printed once (under a launcher
// the ranks agree on them through MPI: ReportEarlyError). After that, one fatal path
// (cmd/run_with_mpi.cpp). The subcommands live in
// src/cmd/, one file each.
#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include <csignal>
#include <sstream>
#include <string>
#include <vector>

#include "cluster/blas_info.h"
#include "cluster/openblas_kernel.h"
#include "cmd/command.h"
#include "comm/make_communicator.h"
#include "util/error.h"
#include "util/launcher_env.h"
#include "util/malloc_tuning.h"

int main(int argc, char** argv) {
  ct::RestartWithOpenBlasKernelForThisCpu(argv);  // before anything runs (it may exec)
  ct::TuneMallocForTraining();                    // before anything large is allocated
  // A write past the file-size limit (ulimit -f; some batch systems set one per job) then fails
  // with EFBIG, which is reported with the limit (util/atomic_file.h) and ends every rank through
  // the error path; the signal's default would kill the rank mid-write, HDF5 files half-closed.
  std::signal(SIGXFSZ, SIG_IGN);
  CLI::App app{"clustertrain " CT_VERSION
               ": data-parallel trainer for scientific models (one process per GPU or core group).\n"
               "Launch with mpirun or srun; every subcommand also runs as a single process.\n"
               "Communication backends built: " +
               ct::BuiltBackends()};
  app.require_subcommand(1);
  // The LibTorch it runs on, for bug reports and for telling a CPU-only build from a CUDA one.
#ifdef CT_TORCH_CUDA
  const char* torch_kind = "with CUDA";
#else
  const char* torch_kind = "CPU only";
#endif
  // Then the BLAS the CPU computes with (and an OpenBLAS restart): what a slow CPU run's report needs.
  app.set_version_flag("--version", [torch_kind] {
    const std::string restart = ct::OpenBlasRestartNote();
    const std::string mismatch = ct::BlasMismatch();
    return fmt::format("clustertrain {} (LibTorch {}, {}; communication backends {})\n{}{}{}", CT_VERSION,
                       CT_LIBTORCH_VERSION, torch_kind, ct::BuiltBackends(), ct::DescribeBlas(),
                       restart.empty() ? "" : "\n" + restart, mismatch.empty() ? "" : "\nwarning: " + mismatch);
  });
  const std::vector<ct::Command> commands = {
      ct::AddTrainCommand(app), ct::AddMakeDataCommand(app), ct::AddConvertCommand(app), ct::AddPredictCommand(app),
      ct::AddInfoCommand(app),  ct::AddBenchCommand(app),    ct::AddTraceCommand(app)};
  // A mistyped command or sub-command (bench iox): CLI11 alone would say only "A subcommand is
  // required".
  if (const std::string problem = ct::MistypedCommand(app, argc, argv); !problem.empty()) {
    return ct::ReportEarlyError(problem, ct::kExitUsage);
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return ct::IsLauncherRankZero() ? app.exit(e) : 0;  // --help, --version
    std::ostringstream help, message;  // CLI11's words: what is wrong, and "Run with --help ..."
    app.exit(e, help, message);
    std::string text = message.str();
    while (!text.empty() && text.back() == '\n') text.pop_back();
    return ct::ReportEarlyError(text, ct::kExitUsage);
  }
  for (const ct::Command& command : commands) {
    if (*command.cli) return command.run(argc, argv);
  }
  return ct::kExitUsage;  // require_subcommand(1) makes this unreachable
}
