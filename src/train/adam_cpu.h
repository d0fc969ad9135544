// torch.optim.Adam's update in one pass over float32 arrays on the CPU: each element's parameter,
// gradient and two moments are read once and the parameter and moments written once (ATen's
// elementwise ops make five passes over the buffers). No LibTorch in here: FlatAdam hands in
// the flat buffers' pointers, split over the rank's threads, and the step's host scalars (so no
// step count is read back from a tensor).
#pragma once

#include <cstdint>

namespace ct {

struct AdamScalars {
  float beta1 = 0.9f, beta2 = 0.999f, eps = 1e-8f;
  float one_minus_beta1 = 0.1f, one_minus_beta2 = 0.001f;
  float decoupled_scale = 1;        // AdamW: p *= 1 - lr * weight_decay first (1: no decoupled decay)
  float l2 = 0;                     // Adam with weight decay: g += weight_decay * p (0: none)
  float neg_step_size = 0;          // -lr / (1 - beta1^t)
  float bias_correction2_sqrt = 1;  // sqrt(1 - beta2^t)
};

// The step's scalars as torch.optim.Adam/AdamW compute them (in double, then float32).
AdamScalars MakeAdamScalars(double lr, double beta1, double beta2, double eps, double weight_decay, bool decoupled,
                            int64_t step);

// Elements [0, n) of the arrays, in place. Vectorised (AVX2 where the CPU has it, else SSE2),
// with the same float32 operations in the same order either way; the lines of the parameter
// and moments are asked for writing ahead of their update (another core may hold a copy of a
// parameter line), and the gradient's for reading.
void AdamUpdate(float* param, const float* grad, float* exp_avg, float* exp_avg_sq, int64_t n, const AdamScalars& s);

}  // namespace ct
