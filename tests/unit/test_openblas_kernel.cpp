// cluster/openblas_kernel.h: which OpenBLAS kernel clustertrain asks for where OpenBLAS fell back
// on a CPU it does not know, and that a user's own OPENBLAS_CORETYPE is never overridden.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <string>

#include "cluster/openblas_kernel.h"

namespace ct {
namespace {

const CpuVectorUnits kAvx512Intel{/*avx2_fma=*/true, /*avx512=*/true, /*amd=*/false};
const CpuVectorUnits kAvx2Intel{/*avx2_fma=*/true, /*avx512=*/false, /*amd=*/false};
const CpuVectorUnits kAvx512Amd{/*avx2_fma=*/true, /*avx512=*/true, /*amd=*/true};
const CpuVectorUnits kAvx2Amd{/*avx2_fma=*/true, /*avx512=*/false, /*amd=*/true};
const CpuVectorUnits kSse{};

// OpenBLAS before 0.3.25 falls back to Prescott on an Intel CPU it does not know (a 5th-generation
// Xeon with OpenBLAS 0.3.21), and older releases to other pre-AVX2 kernels.
TEST(OpenBlasKernel, AFallbackOnAVectorCpuGetsTheCpusKernel) {
  EXPECT_EQ(OpenBlasKernelToForce("Prescott", kAvx512Intel), "SkylakeX");
  EXPECT_EQ(OpenBlasKernelToForce("Prescott", kAvx2Intel), "Haswell");
  EXPECT_EQ(OpenBlasKernelToForce("Prescott", kAvx512Amd), "SkylakeX");    // Zen 5 on an old OpenBLAS
  EXPECT_EQ(OpenBlasKernelToForce("Barcelona", kAvx2Amd), "Zen");          // Zen 1 on OpenBLAS 0.2
  EXPECT_EQ(OpenBlasKernelToForce("Sandybridge", kAvx2Intel), "Haswell");  // AVX without AVX2's FMA
  EXPECT_EQ(OpenBlasKernelToForce("Nehalem", kAvx512Intel), "SkylakeX");
  EXPECT_EQ(OpenBlasKernelToForce("PRESCOTT", kAvx512Intel), "SkylakeX");  // OpenBLAS's spelling varies
}

TEST(OpenBlasKernel, AKernelThatUsesTheCpuIsKept) {
  for (const char* kernel : {"Haswell", "Zen", "SkylakeX", "Cooperlake", "SapphireRapids", "Excavator"}) {
    EXPECT_EQ(OpenBlasKernelToForce(kernel, kAvx512Intel), "") << kernel;
  }
  // A name this code does not know (a later OpenBLAS's) is left alone, not guessed at.
  EXPECT_EQ(OpenBlasKernelToForce("GraniteRapids", kAvx512Intel), "");
}

TEST(OpenBlasKernel, NothingIsForcedWhereTheCpuHasNoAvx2OrTheBlasIsNotOpenBlas) {
  EXPECT_EQ(OpenBlasKernelToForce("Prescott", kSse), "");
  EXPECT_EQ(OpenBlasKernelToForce("Sandybridge", CpuVectorUnits{false, false, false}), "");
  EXPECT_EQ(OpenBlasKernelToForce("", kAvx512Intel), "");  // MKL, BLIS: no OpenBLAS kernel
}

// The restart never runs over the user's own choice, nor twice: with either variable set it
// returns here (an exec would replace this test process).
TEST(OpenBlasKernel, AUsersOpenBlasCoretypeOrAnEarlierRestartIsKept) {
  setenv("OPENBLAS_CORETYPE", "Prescott", 1);
  RestartWithOpenBlasKernelForThisCpu(nullptr);
  EXPECT_STREQ(getenv("OPENBLAS_CORETYPE"), "Prescott");
  EXPECT_EQ(OpenBlasRestartNote(), "");  // the user set it: nothing to report
  unsetenv("OPENBLAS_CORETYPE");

  setenv("CT_OPENBLAS_FELL_BACK_FROM", "Prescott", 1);
  RestartWithOpenBlasKernelForThisCpu(nullptr);
  EXPECT_EQ(getenv("OPENBLAS_CORETYPE"), nullptr);
  unsetenv("CT_OPENBLAS_FELL_BACK_FROM");
}

TEST(OpenBlasKernel, TheRestartIsReportedWithBothKernels) {
  setenv("CT_OPENBLAS_FELL_BACK_FROM", "Prescott", 1);
  setenv("OPENBLAS_CORETYPE", "SkylakeX", 1);
  const std::string note = OpenBlasRestartNote();
  unsetenv("CT_OPENBLAS_FELL_BACK_FROM");
  unsetenv("OPENBLAS_CORETYPE");
  EXPECT_NE(note.find("chose its Prescott kernel"), std::string::npos) << note;
  EXPECT_NE(note.find("restarted itself with OPENBLAS_CORETYPE=SkylakeX"), std::string::npos) << note;
}

}  // namespace
}  // namespace ct
