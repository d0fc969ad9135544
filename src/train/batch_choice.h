// train.batch_size: auto -- the rule that picks the per-rank batch from measurements (the
// measuring is train/batch_autotune.h). Pure, so that it is tested on tables of numbers.
//
// Sizes are tried from train.autotune.min upwards, doubling. After each measurement the search
// stops, keeping the previous size, when the step no longer fits (its memory above the cap) or
// when samples/s grew less than min_gain over the previous size (equal throughput keeps the
// smaller batch: a larger one is only worth its fewer updates per epoch when it is faster). It
// stops keeping the size just measured when the next would pass train.autotune.max or the rows a
// rank holds, or when its memory, extrapolated from the sizes measured, would pass the cap.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace ct {

struct BatchMeasurement {
  int64_t batch = 0;         // per rank
  double samples_per_s = 0;  // over all ranks (the slowest rank's time)
  double memory_bytes = 0;   // the step's peak beyond what the rank held before (largest rank)
};

struct BatchSearchLimits {
  int64_t max_batch = 0;   // train.autotune.max, or the rows a rank holds if fewer
  double memory_cap = 0;   // bytes: train.autotune.memory_fraction of what was available
  double min_gain = 0.05;  // train.autotune.min_gain
};

struct BatchVerdict {
  bool measure_next = false;  // measure 2 x the last size
  int64_t choice = 0;         // when not: the size chosen (0: none fits)
  std::string reason;         // why the search stopped, for the log
};

// `so_far`: the sizes measured, in order (each twice the one before).
BatchVerdict JudgeBatchSearch(const std::vector<BatchMeasurement>& so_far, const BatchSearchLimits& limits);

}  // namespace ct
