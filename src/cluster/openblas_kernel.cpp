#include "cluster/openblas_kernel.h"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdlib>
#include <string_view>

#include "cluster/blas_info.h"

namespace ct {
namespace {

// Set by the restart: the kernel OpenBLAS had chosen. It also keeps a restarted process from
// restarting again.
constexpr const char* kFellBackFrom = "CT_OPENBLAS_FELL_BACK_FROM";

// OpenBLAS's x86 kernels (its corename list) that use neither AVX2 nor AVX-512.
constexpr std::array<std::string_view, 21> kOlderThanAvx2 = {
    "unknown",   "katmai", "coppermine",  "northwood", "prescott",  "banias",     "atom",
    "core2",     "penryn", "dunnington",  "nehalem",   "athlon",    "opteron",    "opteron_sse3",
    "barcelona", "nano",   "sandybridge", "bobcat",    "bulldozer", "piledriver", "steamroller"};

std::string Lowercase(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return std::tolower(c); });
  return text;
}

}  // namespace

CpuVectorUnits ThisCpuVectorUnits() {
  CpuVectorUnits cpu;
#if defined(__x86_64__) && defined(__GNUC__)
  __builtin_cpu_init();  // main may run before the constructors that would call it
  // libgcc's answers include the OS's part (XSAVE enabled for the registers), as OpenBLAS's do.
  cpu.avx2_fma = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  cpu.avx512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512cd") &&
               __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq") &&
               __builtin_cpu_supports("avx512vl");
  cpu.amd = __builtin_cpu_is("amd");
#endif
  return cpu;
}

std::string OpenBlasKernelToForce(const std::string& chosen, const CpuVectorUnits& cpu) {
  if (chosen.empty() || !cpu.avx2_fma) return "";
  const std::string name = Lowercase(chosen);
  if (std::find(kOlderThanAvx2.begin(), kOlderThanAvx2.end(), name) == kOlderThanAvx2.end()) return "";
  if (cpu.avx512) return "SkylakeX";  // OpenBLAS's AVX-512 sgemm; its later Intel targets reuse it
  return cpu.amd ? "Zen" : "Haswell";
}

void RestartWithOpenBlasKernelForThisCpu(char** argv) {
  if (std::getenv("OPENBLAS_CORETYPE") || std::getenv(kFellBackFrom)) return;  // the user's choice, or done
  const std::string chosen = OpenBlasKernel();
  const std::string better = OpenBlasKernelToForce(chosen, ThisCpuVectorUnits());
  if (better.empty()) return;
  setenv("OPENBLAS_CORETYPE", better.c_str(), /*overwrite=*/1);
  setenv(kFellBackFrom, chosen.c_str(), /*overwrite=*/1);
  execv("/proc/self/exe", argv);
  // No /proc (or no exec): go on as loaded; BlasMismatch warns with the same advice.
  unsetenv("OPENBLAS_CORETYPE");
  unsetenv(kFellBackFrom);
}

std::string OpenBlasRestartNote() {
  const char* from = std::getenv(kFellBackFrom);
  const char* to = std::getenv("OPENBLAS_CORETYPE");
  if (!from || !to) return "";
  return std::string("OpenBLAS does not know this CPU and chose its ") + from +
         " kernel; clustertrain restarted itself with OPENBLAS_CORETYPE=" + to +
         " (set OPENBLAS_CORETYPE yourself to choose another)";
}

}  // namespace ct
