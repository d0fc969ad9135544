#include "train/batch_choice.h"

#include <fmt/format.h>

#include "util/human_bytes.h"

namespace ct {
namespace {

// The next size's memory: on the line through the last two sizes (a step's memory is a fixed
// part plus activations linear in the batch), or twice the one size measured.
double NextMemory(const std::vector<BatchMeasurement>& so_far) {
  const BatchMeasurement& last = so_far.back();
  if (so_far.size() < 2) return 2 * last.memory_bytes;
  const BatchMeasurement& before = so_far[so_far.size() - 2];
  const double per_row = (last.memory_bytes - before.memory_bytes) / static_cast<double>(last.batch - before.batch);
  return last.memory_bytes + per_row * static_cast<double>(last.batch);
}

}  // namespace

BatchVerdict JudgeBatchSearch(const std::vector<BatchMeasurement>& so_far, const BatchSearchLimits& limits) {
  const BatchMeasurement& last = so_far.back();
  const int64_t previous = so_far.size() >= 2 ? so_far[so_far.size() - 2].batch : 0;
  if (last.memory_bytes > limits.memory_cap) {
    return {false, previous,
            fmt::format("batch {} needs {} beyond the cap of {} (train.autotune.memory_fraction)", last.batch,
                        HumanBytes(last.memory_bytes), HumanBytes(limits.memory_cap))};
  }
  if (so_far.size() >= 2) {
    const double gain = last.samples_per_s / so_far[so_far.size() - 2].samples_per_s - 1;
    if (gain < limits.min_gain) {
      return {false, previous,
              fmt::format("batch {} gains {:+.1f}% samples/s over {}, less than train.autotune.min_gain {:.0f}%",
                          last.batch, 100 * gain, previous, 100 * limits.min_gain)};
    }
  }
  if (2 * last.batch > limits.max_batch) {
    return {false, last.batch,
            fmt::format("batch {} would pass the largest allowed, {}", 2 * last.batch, limits.max_batch)};
  }
  const double next_memory = NextMemory(so_far);
  if (next_memory > limits.memory_cap) {
    return {false, last.batch,
            fmt::format("batch {} would need about {}, beyond the cap of {} (train.autotune.memory_fraction)",
                        2 * last.batch, HumanBytes(next_memory), HumanBytes(limits.memory_cap))};
  }
  return {true, 0, ""};
}

}  // namespace ct
