// The fatal path of every subcommand that runs under MPI (cmd/command.h): MPI starts, the body
// runs, and any error on any rank is logged with its rank and host, the communicators are
// aborted, and MPI_Abort ends every rank of the job.
#include <spdlog/spdlog.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <thread>

#include "cluster/mpi_world.h"
#include "cluster/preemption.h"
#include "cmd/command.h"
#include "comm/communicator.h"
#include "data/h5_check.h"
#include "util/error.h"
#include "util/launcher_env.h"
#include "util/logging.h"
#include "util/startup_deadline.h"
#include "util/unfinished_file.h"

namespace ct {
namespace {

// Every rank holds an agreed error and is about to call MPI_Abort, which ends every process of
// the job: under MPICH's Hydra within microseconds, before rank 0 (the one that prints it) may
// have written a word. The ranks first meet once rank 0 has; a rank that never comes is not
// waited for beyond a few seconds.
void AfterRankZeroPrinted(const MpiWorld& world) {
  MPI_Request request = MPI_REQUEST_NULL;
  if (MPI_Ibarrier(world.AgreementComm(), &request) != MPI_SUCCESS) return;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  for (int done = 0; !done && std::chrono::steady_clock::now() < deadline;) {
    if (MPI_Test(&request, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS) return;
    if (!done) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

}  // namespace

int RunWithMpi(int argc, char** argv, const std::function<void(const MpiWorld&)>& body, StopSignals stop) {
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
  // After MPI_Init, which may install handlers of its own.
  if (stop == StopSignals::kStopTrainingAtAStep) {
    InstallPreemptionHandlers();
  } else {
    InstallStopSignalCleanup();
  }
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
    if (error && error->Agreed()) AfterRankZeroPrinted(world);
    AbortAllCommunicators();
    if (world.Size() > 1) world.Abort(code);  // ends every rank, not just this one
    // One process: MPI_Finalize comes next, and with it HDF5's clean-up, which crashes on a file
    // whose writes failed (data/h5_check.h). The file is removed already; end without it.
    if (Hdf5WriteLeftOpen()) std::_Exit(code);
    return code;
  }
}

}  // namespace ct
