#include "train/hang_watchdog.h"

#include <chrono>
#include <cstdlib>

#include "comm/communicator.h"
#include "util/error.h"
#include "util/logging.h"

namespace ct {
namespace {

int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace

HangWatchdog::HangWatchdog(double timeout_seconds) : timeout_seconds_(timeout_seconds) {
  last_beat_ns_ = NowNs();
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

void HangWatchdog::Beat(const char* phase) {
  phase_ = phase;
  last_beat_ns_ = NowNs();
}

void HangWatchdog::Watch() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (!stop_signal_.wait_for(lock, std::chrono::seconds(1), [&] { return stopping_; })) {
    const double silent = static_cast<double>(NowNs() - last_beat_ns_) / 1e9;
    if (silent < timeout_seconds_) continue;
    spdlog::error(
        "no progress for {:.0f} s at '{}' ({}): a peer rank is hung, stopped or far behind (or this "
        "one is); ending the job. runtime.watchdog_s={} sets this limit (raise it if a checkpoint "
        "or validation legitimately takes longer)",
        silent, phase_.load(), ProcessIdentity(), timeout_seconds_);
    spdlog::default_logger()->flush();
    AbortAllCommunicators();
    std::_Exit(kExitComm);  // not MPI_Abort: the main thread may be inside MPI right now
  }
}

}  // namespace ct
