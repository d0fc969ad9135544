// The trainer's test hooks, in one place. Each is an environment variable a test sets; unset,
// nothing happens:
//   CT_TEST_HOLD_AT_STEP=N  the loop waits at global step N, alive to the watchdog, until a
//                           preemption signal arrives (cluster/preemption.h), so that a test's
//                           signal lands at a known step however fast the machine trains;
//   CT_TEST_COUNT_SYNCS=1   host syncs are counted and rank 0 logs each epoch's count
//                           (train/host_sync_counter.h), so a test can see none per step.
#pragma once

#include <cstdint>
#include <memory>

#include "train/host_sync_counter.h"

namespace ct {

class TrainerTestHooks {
 public:
  // Reads the environment (a bad CT_TEST_HOLD_AT_STEP is a ConfigError). `first_global_step`:
  // where this run starts, so that a run resumed at the held step does not hold again.
  TrainerTestHooks(bool lead, int64_t first_global_step);

  void BeforeStep(int64_t global_step);  // holds here when asked
  void StartEpoch();                     // this epoch's sync count starts
  void EndEpoch(int64_t epoch);          // rank 0 logs it: "host syncs in epoch 3: 0"

 private:
  bool lead_;
  int64_t first_global_step_;
  int64_t hold_step_;
  std::unique_ptr<HostSyncCounter> sync_counter_;
};

}  // namespace ct
