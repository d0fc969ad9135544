// OpenBLAS built with DYNAMIC_ARCH (Debian's, and most distributions') picks its kernels once, as
// it is loaded, from the CPU's family and model. A release older than the CPU does not know it
// and falls back to Prescott's SSE3 kernels: OpenBLAS 0.3.21 (Debian 12) on a 5th-generation
// Xeon (family 6, model 207) ran the demo's step 4.8x slower than with its AVX-512 kernels.
// OpenBLAS reads the kernel to use from OPENBLAS_CORETYPE, but only as it is loaded, before
// main; so where it fell back on a CPU with AVX2 or AVX-512, clustertrain re-executes itself
// (the same arguments and environment, the same process) with OPENBLAS_CORETYPE set. A user's
// own OPENBLAS_CORETYPE is always kept.
#pragma once

#include <string>

namespace ct {

// The vector units of this CPU that OpenBLAS's kernels can use (and the OS has enabled).
struct CpuVectorUnits {
  bool avx2_fma = false;
  bool avx512 = false;  // F, CD, BW, DQ and VL: what OpenBLAS's SkylakeX kernels need
  bool amd = false;
};
CpuVectorUnits ThisCpuVectorUnits();

// The OPENBLAS_CORETYPE that uses `cpu`'s units where OpenBLAS chose `chosen`, a kernel older
// than AVX2 (Prescott, Nehalem, Sandybridge, ...); "" where `chosen` uses AVX2 or later, or the
// CPU has no AVX2 (then the older kernel is the right one).
std::string OpenBlasKernelToForce(const std::string& chosen, const CpuVectorUnits& cpu);

// First thing in main: where OpenBLAS provides sgemm_ and fell back on this CPU, and neither the
// user nor an earlier restart set OPENBLAS_CORETYPE, execs /proc/self/exe with it set. Returns
// where nothing is to be done or the exec failed (then the start-up log warns).
void RestartWithOpenBlasKernelForThisCpu(char** argv);

// For the start-up log after such a restart, else "": which kernel OpenBLAS had chosen and
// which one it runs now.
std::string OpenBlasRestartNote();

}  // namespace ct
