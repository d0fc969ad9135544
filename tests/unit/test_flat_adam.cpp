// FlatAdam against PyTorch's own torch.optim.Adam (also with an L2 weight decay) and AdamW: 100
// steps of recorded gradients and changing lrs (tests/data/optimizer_reference.pt, written by
// tests/data/make_optimizer_reference.py with Debian's torch), the parameters split over two flat
// groups, one of them not in order.
#include <gtest/gtest.h>

#include <string>

#include "train/flat_adam.h"
#include "unit/optimizer_reference.h"

namespace ct {
namespace {

// How the test steps the optimizer: Step(lr) unfused or fused, or StepOnDevice(lr tensor) as a
// CUDA graph's replay does (the step count advanced by the kernels, the lr read from a tensor).
enum class Update { kPasses, kFused, kOnDevice };

void CheckAgainst(const std::string& name, double weight_decay, Update update, bool decoupled = true) {
  const bool fused = update != Update::kPasses;
  const c10::impl::GenericDict reference = test::LoadOptimizerReference();
  std::vector<at::Tensor> params = test::InitialParams(reference);
  AdamSettings settings;
  settings.weight_decay = weight_decay;
  settings.decoupled = decoupled;
  settings.fused = fused;
  FlatAdam adam(params, test::TwoBuckets(params), settings);
  ASSERT_EQ(adam.Capturable(), fused);  // the fused kernel, which alone is capturable
  const at::Tensor lrs = reference.at("lrs").toTensor();
  for (int64_t step = 0; step < lrs.size(0); ++step) {
    test::SetRecordedGradients(adam, params, reference, step);
    if (update == Update::kOnDevice) {
      const at::Tensor lr = at::full({}, lrs[step].item<double>(), at::kFloat);
      adam.StepOnDevice(lr);
      adam.CountStep();
    } else {
      adam.Step(lrs[step].item<double>());
    }
  }
  EXPECT_EQ(adam.Steps(), 100);
  test::ExpectLikeReference(adam, params, reference, name);
}

TEST(FlatAdam, EqualsTorchOptimAdamOver100Steps) { CheckAgainst("adam", 0.0, Update::kPasses); }

TEST(FlatAdam, EqualsTorchOptimAdamWOver100Steps) { CheckAgainst("adamw", 0.1, Update::kPasses); }

TEST(FlatAdam, EqualsTorchOptimAdamWithL2DecayOver100Steps) {
  CheckAgainst("adam_l2", 0.1, Update::kPasses, /*decoupled=*/false);
}

// LibTorch's fused kernel (at::_fused_adam_, _fused_adamw_) over the same flat buffers.
TEST(FlatAdam, FusedEqualsTorchOptimAdamOver100Steps) {
  if (!FlatAdam::HasFusedKernel(c10::Device(c10::kCPU))) GTEST_SKIP() << "no fused CPU Adam before LibTorch 2.4";
  CheckAgainst("adam", 0.0, Update::kFused);
}

TEST(FlatAdam, FusedEqualsTorchOptimAdamWOver100Steps) {
  if (!FlatAdam::HasFusedKernel(c10::Device(c10::kCPU))) GTEST_SKIP() << "no fused CPU Adam before LibTorch 2.4";
  CheckAgainst("adamw", 0.1, Update::kFused);
  CheckAgainst("adam_l2", 0.1, Update::kFused, /*decoupled=*/false);
}

// The CUDA graph's update, run eagerly on the CPU: same kernel, lr and step count on the device.
TEST(FlatAdam, OnDeviceCountersEqualTorchOptimAdamAndAdamW) {
  if (!FlatAdam::HasFusedKernel(c10::Device(c10::kCPU))) GTEST_SKIP() << "no fused CPU Adam before LibTorch 2.4";
  CheckAgainst("adam", 0.0, Update::kOnDevice);
  CheckAgainst("adamw", 0.1, Update::kOnDevice);
}

TEST(FlatAdam, WithoutDecayAdamWIsNotAdam) {
  // The two references differ, so each test above can tell them apart.
  const c10::impl::GenericDict reference = test::LoadOptimizerReference();
  const auto params = [&](const char* name) { return test::Tensors(reference.at(name).toGenericDict().at("params")); };
  EXPECT_GT(test::RelativeDifference(params("adam")[0], params("adamw")[0]), 1e-3);
  EXPECT_GT(test::RelativeDifference(params("adam_l2")[0], params("adamw")[0]), 1e-3);
  EXPECT_GT(test::RelativeDifference(params("sgd")[0], params("sgd_l2")[0]), 1e-3);
}

}  // namespace
}  // namespace ct
