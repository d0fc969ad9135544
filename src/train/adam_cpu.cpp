#include "train/adam_cpu.h"

#include <algorithm>
#include <cmath>

#if defined(__x86_64__) && defined(__GNUC__)
#include <cpuid.h>
#endif

namespace ct {

AdamScalars MakeAdamScalars(double lr, double beta1, double beta2, double eps, double weight_decay, bool decoupled,
                            int64_t step) {
  AdamScalars s;
  s.beta1 = static_cast<float>(beta1);
  s.beta2 = static_cast<float>(beta2);
  s.eps = static_cast<float>(eps);
  s.one_minus_beta1 = static_cast<float>(1 - beta1);
  s.one_minus_beta2 = static_cast<float>(1 - beta2);
  if (weight_decay > 0 && decoupled) s.decoupled_scale = static_cast<float>(1 - lr * weight_decay);
  if (weight_decay > 0 && !decoupled) s.l2 = static_cast<float>(weight_decay);
  s.neg_step_size = static_cast<float>(-lr / (1 - std::pow(beta1, static_cast<double>(step))));
  s.bias_correction2_sqrt = static_cast<float>(std::sqrt(1 - std::pow(beta2, static_cast<double>(step))));
  return s;
}

namespace {

// A parameter line that another core has read (the rank's other threads in the GEMMs, or, with
// the update split over a node's ranks in shared memory, the other ranks in their forward) is
// only written after that core's copy is invalidated, and a store waits for it. The hardware
// prefetcher asks for lines for reading, which does not help (measured: a read prefetch of the
// parameter made it slower); asking for each parameter line for writing (PREFETCHW) 4 KiB
// ahead does. In the demo's 2-rank step (bench step, side by side, 8 rounds) the split update
// took 0.58 against 0.73 ms (Debian) and 0.61 against 0.83 ms (pip); 1 rank unchanged.
// bench/shared_write.cpp shows the effect alone. Blocks of 64 floats keep the inner loop as
// vectorised as before.
// The moments (written too) and the gradient (read) are asked for 4 KiB ahead as well: a core
// streams four arrays at once, and without that it waited on their lines too. Adam in bench
// step, before against after (side by side, median ratios): 0.96 (pip, 1 rank, 10 rounds),
// 0.91 (Debian, 1 rank) and 0.83 (pip, 2 ranks split); bench/results/adam_cpu.md: 1.01 of the
// memory-only pass at 1 rank, where it was 1.10.
constexpr int64_t kBlock = 64;    // floats: four cache lines, eight AVX2 vectors
constexpr int64_t kAhead = 1024;  // floats: 4 KiB

bool CpuPrefetchesForWrite() {
#if defined(__x86_64__) && defined(__GNUC__)
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  return __get_cpuid(0x80000001, &eax, &ebx, &ecx, &edx) && (ecx & (1u << 8)) != 0;  // PRFCHW
#else
  return true;  // __builtin_prefetch for writing is the architecture's own (ARM: PRFM PSTL1KEEP)
#endif
}

const bool kPrefetchForWrite = CpuPrefetchesForWrite();

inline void PrefetchForWrite(const float* address) {
#if defined(__x86_64__) && defined(__GNUC__)
  // GCC emits PREFETCHW for __builtin_prefetch(p, 1) only where the target enables it, which
  // neither clone below does; the CPU has it (kPrefetchForWrite).
  asm volatile("prefetchw %0" : : "m"(*reinterpret_cast<const char*>(address)));
#else
  __builtin_prefetch(address, /*rw=*/1, /*locality=*/3);
#endif
}

// Asks for the block of kBlock elements at `at` of each array: the parameter's and moments'
// lines for writing, the gradient's for reading.
inline void PrefetchBlock(const float* param, const float* grad, const float* exp_avg, const float* exp_avg_sq,
                          int64_t at) {
  for (int64_t line = at; line < at + kBlock; line += 16) {
    if (kPrefetchForWrite) {
      PrefetchForWrite(param + line);
      PrefetchForWrite(exp_avg + line);
      PrefetchForWrite(exp_avg_sq + line);
    }
    __builtin_prefetch(grad + line, /*rw=*/0, /*locality=*/3);
  }
}

// One loop per kind of weight decay, so that no element pays for a term it does not have (and a
// non-finite parameter never enters a gradient through a zero decay). This file is compiled
// with -fno-math-errno, so that std::sqrt vectorises (the argument is never negative).
template <bool kDecoupled, bool kL2>
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__SANITIZE_ADDRESS__)
__attribute__((target_clones("avx2", "default")))
#endif
void Update(float* __restrict param, const float* __restrict grad, float* __restrict exp_avg,
            float* __restrict exp_avg_sq, int64_t n, const AdamScalars s) {
  for (int64_t begin = 0; begin < n; begin += kBlock) {
    if (begin + kAhead < n) PrefetchBlock(param, grad, exp_avg, exp_avg_sq, begin + kAhead);
    const int64_t end = std::min(begin + kBlock, n);
    for (int64_t i = begin; i < end; ++i) {
      float p = param[i];
      if constexpr (kDecoupled) p = p * s.decoupled_scale;
      float g = grad[i];
      if constexpr (kL2) g = g + s.l2 * p;
      const float m = exp_avg[i] * s.beta1 + s.one_minus_beta1 * g;
      const float v = exp_avg_sq[i] * s.beta2 + s.one_minus_beta2 * g * g;
      exp_avg[i] = m;
      exp_avg_sq[i] = v;
      param[i] = p + s.neg_step_size * m / (std::sqrt(v) / s.bias_correction2_sqrt + s.eps);
    }
  }
}

}  // namespace

void AdamUpdate(float* param, const float* grad, float* exp_avg, float* exp_avg_sq, int64_t n, const AdamScalars& s) {
  if (s.decoupled_scale != 1) {
    Update<true, false>(param, grad, exp_avg, exp_avg_sq, n, s);
  } else if (s.l2 != 0) {
    Update<false, true>(param, grad, exp_avg, exp_avg_sq, n, s);
  } else {
    Update<false, false>(param, grad, exp_avg, exp_avg_sq, n, s);
  }
}

}  // namespace ct
