// Which BLAS the CPU's matrix products run on, for the start-up log: the step's speed on a CPU
// depends on it more than on anything else (docs/benchmarks.md). LibTorch either carries its BLAS
// inside (the pip wheel: MKL) or calls sgemm_ from whatever library the loader found first
// (Debian: libblas.so.3, an alternatives link to OpenBLAS, BLIS or the reference BLAS).
#pragma once

#include <string>

namespace ct {

// "BLAS: OpenBLAS 0.3.21 ... (OpenMP threads), kernel SkylakeX, sgemm_ from /usr/lib/.../libblas.so.3;
// ATen's CPU kernels: AVX2". What cannot be found out is said so, never guessed.
std::string DescribeBlas();

// The kernel of the OpenBLAS that provides sgemm_ ("SkylakeX", "Prescott"), or "" where sgemm_
// is not OpenBLAS's.
std::string OpenBlasKernel();

// A warning where the BLAS is known to be a poor match for this processor, else "": OpenBLAS on a
// kernel older than the CPU's vector units (cluster/openblas_kernel.h). MKL on an AMD CPU is no
// warning, only said in DescribeBlas: measured from 1.44x slower than OpenBLAS to 1.1x faster on
// two AMD EPYC VMs (docs/benchmarks.md).
std::string BlasMismatch();

// The CPU vendor of /proc/cpuinfo ("GenuineIntel", "AuthenticAMD", ...), or "".
std::string CpuVendor();

}  // namespace ct
