// Rank 0's progress inside an epoch. As a bar: redrawn in place (batches done, samples/s,
// ETA), at most four times a second. As lines (Slurm logs): a plain line every `log_every`
// batches, no control characters. Counts batches on the host: no device sync.
//
// style auto draws a bar only when stdout is a terminal and Open MPI is not forwarding it:
// mpirun gives every rank a pseudo-terminal even when its own output goes to a file.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

#include "util/choices.h"

namespace ct {

class Progress {
 public:
  Progress(bool enabled, ProgressStyle style, int64_t log_every, int64_t epoch, int64_t epochs, int64_t steps,
           int64_t samples_per_step);
  void Step(int64_t done);  // `done` optimizer steps finished in this epoch
  void Finish();            // clears the bar before the epoch line

 private:
  using Clock = std::chrono::steady_clock;
  bool enabled_;
  bool terminal_;
  int64_t log_every_, epoch_, epochs_, steps_, samples_per_step_;
  Clock::time_point start_ = Clock::now();
  Clock::time_point last_draw_ = start_;
  bool drawn_ = false;
};

}  // namespace ct
