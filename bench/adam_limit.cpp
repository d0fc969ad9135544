// The memory limit under Adam's CPU update: one pass over four float32 arrays of the demo's
// parameter count that reads parameter, gradient and both moments and writes parameter and
// moments -- Adam's 28 bytes per element -- with an add each instead of Adam's arithmetic. What
// Adam's one pass (train/adam_cpu.h) takes against this is how far it is from the memory's rate.
// Built and run by bench/adam_cpu.sh (g++ -O3 -fopenmp -march=native); prints the median ms.
//   adam_limit ELEMENTS THREADS PASSES
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <vector>

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: adam_limit ELEMENTS THREADS PASSES\n");
    return 2;
  }
  const long n = std::atol(argv[1]);
  const int threads = std::atoi(argv[2]);
  const int passes = std::atoi(argv[3]);
  omp_set_num_threads(threads);
  std::unique_ptr<float[]> p(new float[n]), g(new float[n]), m(new float[n]), v(new float[n]);
#pragma omp parallel for schedule(static)  // first touch by the threads that run the passes
  for (long i = 0; i < n; ++i) p[i] = g[i] = m[i] = v[i] = 1e-3f;
  std::vector<double> ms;
  for (int pass = 0; pass < passes; ++pass) {
    const auto start = std::chrono::steady_clock::now();
    float* __restrict pp = p.get();
    const float* __restrict gp = g.get();
    float* __restrict mp = m.get();
    float* __restrict vp = v.get();
#pragma omp parallel for schedule(static)
    for (long i = 0; i < n; ++i) {
      const float grad = gp[i];
      mp[i] += grad;
      vp[i] += grad;
      pp[i] += mp[i] * 1e-9f + vp[i] * 1e-9f;
    }
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
  }
  volatile float keep = p[n / 2];  // the passes' results are used: nothing is left out
  (void)keep;
  std::sort(ms.begin(), ms.end());
  std::printf("%.4f\n", ms[ms.size() / 2]);
  return 0;
}
