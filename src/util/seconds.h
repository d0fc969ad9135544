// Seconds elapsed on the steady clock, for the timings that training and the benchmarks report.
#pragma once

#include <chrono>

namespace ct {

inline double SecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace ct
