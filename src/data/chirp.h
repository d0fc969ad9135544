// Synthetic gravitational-wave chirps: a clean inspiral-merger-ringdown-like waveform and the
// same waveform in white Gaussian noise. Each row depends only on (seed, row index), so a
// dataset is identical whatever the number of ranks that wrote it.
#pragma once

#include <cstdint>

namespace ct {

struct ChirpOptions {
  int64_t length = 1024;   // samples per waveform, over a window of 1 time unit
  double noise_std = 0.3;  // standard deviation of the added noise (peak amplitude <= 1)
  uint64_t seed = 1;
};

// The physical parameters that generate a chirp, in this order (make-data's `params` columns):
// merger time (in the window's time units), starting frequency (cycles per window), peak
// amplitude, initial phase (radians), ringdown damping time.
constexpr int64_t kChirpParams = 5;
constexpr const char* kChirpParamNames = "t_merge,f_start,amplitude,phase,damping";

// Writes `length` samples of the noisy strain to `noisy` and of the clean waveform to `clean`,
// and, when `params` is not null, the kChirpParams parameters that made them.
void ChirpRow(const ChirpOptions& options, int64_t row, float* noisy, float* clean, float* params = nullptr);

}  // namespace ct
