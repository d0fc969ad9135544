// The median of a benchmark's timings (the middle two averaged for an even count), the number
// every bench table reports: robust to the stray slow repeat a shared machine brings.
#pragma once

#include <algorithm>
#include <vector>

namespace ct {

inline double Median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

}  // namespace ct
