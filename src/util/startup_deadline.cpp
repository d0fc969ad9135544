#include "util/startup_deadline.h"

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "util/error.h"
#include "util/launcher_env.h"
#include "util/test_stop.h"

namespace ct {
namespace {

struct Deadline {
  std::mutex mutex;
  std::condition_variable ended_signal;
  bool ended = false;
  const char* phase = "before MPI_Init";
};

// Shared with a detached thread: the process may exit with the deadline still running.
std::shared_ptr<Deadline>& Current() {
  static std::shared_ptr<Deadline> current;
  return current;
}

[[noreturn]] void Expire(double seconds, const char* phase) {
  const std::optional<int> rank = LauncherRank();
  std::fprintf(stderr,
               "clustertrain: error: start-up did not reach the ranks' first meeting within runtime.watchdog_s=%g s "
               "(launcher rank %d on %s, stuck %s): a rank that never started or is stopped, a node that cannot "
               "reach the others, or a file system that hangs. Check that every node runs its ranks and can reach "
               "the first node, or raise runtime.watchdog_s if start-up at this scale takes longer\n",
               seconds, rank.value_or(-1), ProcessHost().c_str(), phase);
  std::fflush(stderr);
  std::_Exit(kExitComm);
}

}  // namespace

void StartStartupDeadline(double seconds) {
  if (seconds <= 0 || Current()) return;
  auto deadline = std::make_shared<Deadline>();
  Current() = deadline;
  std::thread([deadline, seconds] {
    std::unique_lock<std::mutex> lock(deadline->mutex);
    const auto limit = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
    if (!deadline->ended_signal.wait_until(lock, limit, [&] { return deadline->ended; })) {
      Expire(seconds, deadline->phase);
    }
  }).detach();
}

void StartupPhase(const char* phase) {
  if (const auto& deadline = Current()) {
    std::lock_guard<std::mutex> lock(deadline->mutex);
    deadline->phase = phase;
  }
  StopHereForATest(phase);
}

void EndStartupDeadline() {
  if (const auto& deadline = Current()) {
    {
      std::lock_guard<std::mutex> lock(deadline->mutex);
      deadline->ended = true;
    }
    deadline->ended_signal.notify_all();
  }
}

}  // namespace ct
