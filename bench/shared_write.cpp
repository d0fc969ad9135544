// Why Adam's CPU pass asks for its parameter lines for writing (train/adam_cpu.cpp): two
// processes, one per core, each update their half of a parameter array with Adam's arithmetic
// (28 bytes per element), then meet and read the whole array, as the split update's ranks
// do between updates (their forward reads every parameter). Four ways, each printing the
// update's median ms per process:
//   private             each process its own full copy (the all-gather's layout);
//   shared, own half    one array in shared memory, each process reading back only its half;
//   shared              one array in shared memory, both reading all of it (the split update);
//   shared, prefetchw   the same, each parameter line asked for writing 4 KiB ahead.
// Built and run by hand (x86-64 with PREFETCHW):
//   g++ -O3 -march=native bench/shared_write.cpp -o /tmp/shared_write && /tmp/shared_write 1325600
#include <sched.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace {

struct Meeting {  // a barrier for the two processes, in shared memory
  std::atomic<int> arrived{0};
  std::atomic<int> round{0};
  void Meet() {
    const int now = round.load();
    if (arrived.fetch_add(1) == 1) {
      arrived = 0;
      round.fetch_add(1);
    } else {
      while (round.load() == now) {
      }
    }
  }
};

void* SharedZeros(size_t bytes) {
  return mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
}

enum class Way { kPrivate, kSharedOwnHalf, kShared, kSharedPrefetchw };
const char* const kNames[] = {"private", "shared, own half", "shared", "shared, prefetchw"};

// Process `me` (0 or 1) updates its half `passes` times; returns the median ms.
double Run(Way way, int me, long n, float* shared_params, Meeting* meeting) {
  const long half = n / 2, lo = me * half;
  std::vector<float> own_copy(way == Way::kPrivate ? n : 0, 1.0f);
  float* params = way == Way::kPrivate ? own_copy.data() : shared_params;
  std::vector<float> grad(half, 1e-3f), m(half, 0.0f), v(half, 0.0f);
  std::vector<double> ms;
  float sum = 0;
  for (int pass = 0; pass < 300; ++pass) {
    meeting->Meet();
    const auto start = std::chrono::steady_clock::now();
    float* p = params + lo;
    for (long block = 0; block < half; block += 64) {
      if (way == Way::kSharedPrefetchw && block + 1024 < half) {
        for (int line = 0; line < 64; line += 16) asm volatile("prefetchw %0" : : "m"(p[block + 1024 + line]));
      }
      const long end = std::min(block + 64, half);
      for (long i = block; i < end; ++i) {
        m[i] = 0.9f * m[i] + 0.1f * grad[i];
        v[i] = 0.999f * v[i] + 0.001f * grad[i] * grad[i];
        p[i] -= 1e-6f * m[i] / (v[i] + 1e-8f);
      }
    }
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
    meeting->Meet();
    const long from = way == Way::kSharedOwnHalf ? lo : 0, to = way == Way::kSharedOwnHalf ? lo + half : n;
    for (long i = from; i < to; ++i) sum += params[i];  // the forward reads the parameters
  }
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2] + (sum == -1.0f ? 1 : 0);  // `sum` kept alive
}

}  // namespace

int main(int argc, char** argv) {
  const long n = argc > 1 ? std::atol(argv[1]) : 1325600;
  std::printf("| way | process 0 update ms | process 1 update ms |\n|---|---:|---:|\n");
  for (Way way : {Way::kPrivate, Way::kSharedOwnHalf, Way::kShared, Way::kSharedPrefetchw}) {
    auto* meeting = new (SharedZeros(sizeof(Meeting))) Meeting();
    auto* params = static_cast<float*>(SharedZeros(n * sizeof(float)));
    auto* result = static_cast<double*>(SharedZeros(2 * sizeof(double)));
    std::fflush(stdout);  // or the child would print the table's head again
    const pid_t child = fork();
    const int me = child == 0 ? 1 : 0;
    cpu_set_t cpus;
    CPU_ZERO(&cpus);
    CPU_SET(me, &cpus);
    sched_setaffinity(0, sizeof cpus, &cpus);
    result[me] = Run(way, me, n, params, meeting);
    if (child == 0) _exit(0);
    waitpid(child, nullptr, 0);
    std::printf("| %s | %.3f | %.3f |\n", kNames[static_cast<int>(way)], result[0], result[1]);
  }
}
