// runtime.tf32 (cluster/tf32.h): when TF32 is on, and that LibTorch's switches follow.
#include <gtest/gtest.h>

#include <ATen/Context.h>

#include "cluster/tf32.h"

namespace ct {
namespace {

const c10::Device kGpu(c10::kCUDA, 0);
const c10::Device kCpu(c10::kCPU);

TEST(Tf32, AutoIsOnFromAmpereOn) {
  EXPECT_TRUE(DecideTf32(AutoOnOff::kAuto, kGpu, 8).enabled);
  EXPECT_TRUE(DecideTf32(AutoOnOff::kAuto, kGpu, 9).enabled);
  const Tf32Decision volta = DecideTf32(AutoOnOff::kAuto, kGpu, 7);
  EXPECT_FALSE(volta.enabled);
  EXPECT_EQ(volta.reason, "runtime.tf32=auto: off (GPU sm_7x has no TF32)");
  EXPECT_FALSE(DecideTf32(AutoOnOff::kAuto, kGpu, std::nullopt).enabled);
}

TEST(Tf32, OnAndOffAreObeyedAndSaidSo) {
  EXPECT_TRUE(DecideTf32(AutoOnOff::kOn, kGpu, 7).enabled);
  EXPECT_EQ(DecideTf32(AutoOnOff::kOn, kGpu, 7).reason, "runtime.tf32=on: on (GPU sm_7x has no TF32: no effect)");
  EXPECT_FALSE(DecideTf32(AutoOnOff::kOff, kGpu, 9).enabled);
}

TEST(Tf32, CpuNeverUsesIt) {
  for (AutoOnOff choice : {AutoOnOff::kAuto, AutoOnOff::kOn, AutoOnOff::kOff}) {
    const Tf32Decision d = DecideTf32(choice, kCpu, std::nullopt);
    EXPECT_FALSE(d.enabled);
    EXPECT_NE(d.reason.find("no effect on CPU"), std::string::npos) << d.reason;
  }
}

TEST(Tf32, ApplySetsLibTorchsSwitches) {
  // torch.backends.cuda.matmul.allow_tf32 and torch.backends.cudnn.allow_tf32 are these flags.
  at::globalContext().setAllowTF32CuBLAS(true);
  at::globalContext().setAllowTF32CuDNN(true);
  EXPECT_FALSE(ApplyTf32(AutoOnOff::kOn, kCpu).enabled);
  EXPECT_FALSE(at::globalContext().allowTF32CuBLAS());
  EXPECT_FALSE(at::globalContext().allowTF32CuDNN());
}

}  // namespace
}  // namespace ct
