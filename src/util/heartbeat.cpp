#include "util/heartbeat.h"

#include <atomic>
#include <chrono>
#include <cstdint>

namespace ct {
namespace {

int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

std::atomic<int64_t> last_beat_ns{NowNs()};
std::atomic<const char*> current_phase{"start-up"};

}  // namespace

void Heartbeat(const char* phase) {
  current_phase = phase;
  last_beat_ns = NowNs();
}

void Heartbeat() { last_beat_ns = NowNs(); }

HeartbeatReading LastHeartbeat() {
  return {static_cast<double>(NowNs() - last_beat_ns.load()) / 1e9, current_phase.load()};
}

}  // namespace ct
