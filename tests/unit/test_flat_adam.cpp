// FlatAdam against PyTorch's own torch.optim.Adam (also with an L2 weight decay) and AdamW: 100
// steps of recorded gradients and changing lrs (tests/data/optimizer_reference.pt, written by
// tests/data/make_optimizer_reference.py with Debian's torch), the parameters split over two flat
// groups, one of them not in order.
#include <ATen/Parallel.h>
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "train/flat_adam.h"
#include "unit/optimizer_reference.h"

namespace ct {
namespace {

// How the test steps the optimizer: Step(lr) with ATen's five elementwise passes, with our one
// CPU pass (train/adam_cpu.h) or fused, or StepOnDevice(lr tensor) as a CUDA graph's replay does
// (the step count advanced by the kernels, the lr read from a tensor).
enum class Update { kPasses, kOnePass, kFused, kOnDevice };

void CheckAgainst(const std::string& name, double weight_decay, Update update, bool decoupled = true) {
  const bool fused = update == Update::kFused || update == Update::kOnDevice;
  const c10::impl::GenericDict reference = test::LoadOptimizerReference();
  std::vector<at::Tensor> params = test::InitialParams(reference);
  AdamSettings settings;
  settings.weight_decay = weight_decay;
  settings.decoupled = decoupled;
  settings.fused = fused;
  settings.one_pass = update == Update::kOnePass;
  FlatAdam adam(params, test::TwoBuckets(params), settings);
  ASSERT_EQ(adam.Capturable(), fused);  // the fused kernel, which alone is capturable
  const bool one_pass = adam.Describe().find("one vectorised pass") != std::string::npos;
  ASSERT_EQ(one_pass, update == Update::kOnePass) << adam.Describe();
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

// The one-pass CPU kernel that training uses on the CPU, in every build.
TEST(FlatAdam, OnePassEqualsTorchOptimAdamAdamWAndL2Over100Steps) {
  CheckAgainst("adam", 0.0, Update::kOnePass);
  CheckAgainst("adamw", 0.1, Update::kOnePass);
  CheckAgainst("adam_l2", 0.1, Update::kOnePass, /*decoupled=*/false);
}

// All of `params` in one bucket, their gradients views of its flat buffer.
std::vector<GradientBucket> OneBucket(std::vector<at::Tensor>& params) {
  int64_t elements = 0;
  for (const at::Tensor& p : params) elements += p.numel();
  GradientBucket bucket{{}, at::zeros({elements})};
  int64_t offset = 0;
  for (size_t i = 0; i < params.size(); ++i) {
    bucket.params.push_back(i);
    params[i].mutable_grad() = bucket.grads.narrow(0, offset, params[i].numel()).view(params[i].sizes());
    offset += params[i].numel();
  }
  return {bucket};
}

// Buffers long enough to be split over threads, of a length no vector width divides: the one
// pass agrees with the five passes to float32 rounding (1e-6) on every element, for each decay.
TEST(FlatAdam, OnePassEqualsFivePassesOnLongBuffersSplitOverThreads) {
  const int threads = at::get_num_threads();
  at::set_num_threads(2);
  for (const auto& [decay, decoupled] :
       std::vector<std::pair<double, bool>>{{0.0, true}, {0.05, true}, {0.05, false}}) {
    at::manual_seed(5);
    const std::vector<at::Tensor> initial = {at::randn({100003}), at::randn({77, 13})};
    std::vector<at::Tensor> a, b;
    for (const at::Tensor& t : initial) {
      a.push_back(t.clone());
      b.push_back(t.clone());
    }
    AdamSettings settings;
    settings.weight_decay = decay;
    settings.decoupled = decoupled;
    settings.fused = false;
    settings.one_pass = false;
    FlatAdam five(a, OneBucket(a), settings);
    settings.one_pass = true;
    FlatAdam one(b, OneBucket(b), settings);
    for (int step = 0; step < 5; ++step) {
      const std::vector<at::Tensor> grads = {at::randn({100003}), at::randn({77, 13})};
      for (size_t i = 0; i < grads.size(); ++i) {
        five.Params()[i].mutable_grad().copy_(grads[i]);
        one.Params()[i].mutable_grad().copy_(grads[i]);
      }
      five.Step(1e-3 * (step + 1));
      one.Step(1e-3 * (step + 1));
    }
    for (size_t i = 0; i < a.size(); ++i) {
      EXPECT_TRUE(at::allclose(one.Params()[i], five.Params()[i], 1e-6, 1e-7)) << "decay " << decay << " param " << i;
      EXPECT_TRUE(at::allclose(one.ExpAvgSq(i), five.ExpAvgSq(i), 1e-6, 1e-12)) << "decay " << decay << " v " << i;
    }
  }
  at::set_num_threads(threads);
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
