// A small, portable random number generator (SplitMix64). Data order and synthetic data are
// defined by it, so they are the same with every compiler and standard library.
#pragma once

#include <cmath>
#include <cstdint>

namespace ct {

class SplitMix64 {
 public:
  explicit SplitMix64(uint64_t seed) : state_(seed) {}

  uint64_t Next() {
    uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  // Uniform in [0, 1).
  double Uniform() { return static_cast<double>(Next() >> 11) * 0x1.0p-53; }
  double Uniform(double lo, double hi) { return lo + (hi - lo) * Uniform(); }
  // Uniform integer in [0, n), without modulo bias worth caring about for n << 2^64.
  uint64_t Below(uint64_t n) { return static_cast<uint64_t>(Uniform() * static_cast<double>(n)); }
  // Standard normal (Box-Muller).
  double Normal() {
    double u1 = Uniform();
    double u2 = Uniform();
    if (u1 < 1e-300) u1 = 1e-300;
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
  }

 private:
  uint64_t state_;
};

// Derives independent seeds from (seed, a, b), e.g. (run seed, epoch, rank).
inline uint64_t MixSeed(uint64_t seed, uint64_t a, uint64_t b = 0) {
  SplitMix64 mix(seed ^ (a * 0xD1B54A32D192ED03ull) ^ (b * 0x8CB92BA72F3D8DD7ull));
  mix.Next();
  return mix.Next();
}

}  // namespace ct
