#include "train/hang_watchdog.h"

#include <chrono>
#include <cstdlib>

#include "comm/communicator.h"
#include "util/error.h"
#include "util/heartbeat.h"
#include "util/logging.h"
#include "util/startup_deadline.h"

namespace ct {

HangWatchdog::HangWatchdog(double timeout_seconds) : timeout_seconds_(timeout_seconds) {
  Heartbeat();           // the limit counts from now
  EndStartupDeadline();  // the ranks have met: this watchdog takes over
  if (timeout_seconds_ > 0) thread_ = std::thread([this] { Watch(); });
}

HangWatchdog::~HangWatchdog() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  stop_signal_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void HangWatchdog::Watch() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (!stop_signal_.wait_for(lock, std::chrono::seconds(1), [&] { return stopping_; })) {
    const HeartbeatReading last = LastHeartbeat();
    if (last.seconds_since < timeout_seconds_) continue;
    spdlog::error(
        "no progress for {:.0f} s at '{}' ({}): a peer rank is hung, stopped or far behind (or this "
        "one is); ending the job. runtime.watchdog_s={} sets this limit (raise it if a checkpoint "
        "or validation legitimately takes longer)",
        last.seconds_since, last.phase, ProcessIdentity(), timeout_seconds_);
    spdlog::default_logger()->flush();
    AbortAllCommunicators();
    std::_Exit(kExitComm);  // not MPI_Abort: the main thread may be inside MPI right now
  }
}

}  // namespace ct
