// Ends this rank when it stops making progress, so that no job hangs on its allocation.
//
// A rank whose peer hangs without dying (a SIGSTOP, a deadlock, a stuck file system) waits in
// a collective forever: MPI cannot tell a slow peer from a dead one. The trainer starts the
// watchdog before anything else (so start-up, data loading and every collective are covered)
// and marks progress with util/heartbeat.h: at each phase of start-up, every piece of a
// collective file read, every step, before each epoch's validation and at each checkpoint
// (so one validation pass must fit in runtime.watchdog_s). A thread checks once a second and,
// when no beat came for runtime.watchdog_s, logs what the rank was doing and exits with
// kExitComm. mpirun (and srun --kill-on-bad-exit) then end every other rank.
#pragma once

#include <condition_variable>
#include <mutex>
#include <thread>

namespace ct {

class HangWatchdog {
 public:
  explicit HangWatchdog(double timeout_seconds);  // 0 disables it
  ~HangWatchdog();
  HangWatchdog(const HangWatchdog&) = delete;
  HangWatchdog& operator=(const HangWatchdog&) = delete;

 private:
  void Watch();

  double timeout_seconds_;
  std::mutex mutex_;
  std::condition_variable stop_signal_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace ct
