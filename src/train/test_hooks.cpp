#include "train/test_hooks.h"

#include <chrono>
#include <thread>

#include "cluster/preemption.h"
#include "util/heartbeat.h"
#include "util/logging.h"

namespace ct {

TrainerTestHooks::TrainerTestHooks(bool lead, int64_t first_global_step)
    : lead_(lead), first_global_step_(first_global_step), hold_step_(TestHoldStep()) {
  if (HostSyncCounter::Requested()) sync_counter_ = std::make_unique<HostSyncCounter>();
}

void TrainerTestHooks::BeforeStep(int64_t global_step) {
  if (global_step != hold_step_ || global_step == first_global_step_) return;
  if (lead_) spdlog::info("held at global step {} (CT_TEST_HOLD_AT_STEP): waiting for SIGUSR1 or SIGTERM", global_step);
  while (!PreemptionRequested()) {
    Heartbeat("held for a test's signal");
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

void TrainerTestHooks::StartEpoch() {
  if (sync_counter_) sync_counter_->Take();
}

void TrainerTestHooks::EndEpoch(int64_t epoch) {
  if (sync_counter_ && lead_) spdlog::info("host syncs in epoch {}: {}", epoch, sync_counter_->Take());
}

}  // namespace ct
