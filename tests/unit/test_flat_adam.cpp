// FlatAdam against PyTorch's own torch.optim.Adam and AdamW: 100 steps of recorded gradients and
// changing lrs (tests/data/adam_reference.pt, written by tests/data/make_adam_reference.py with
// Debian's torch), the parameters split over two flat groups, one of them not in order.
#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <torch/csrc/jit/serialization/pickle.h>

#include <fstream>
#include <iterator>
#include <string>

#include "train/flat_adam.h"

namespace ct {
namespace {

c10::impl::GenericDict LoadReference() {
  std::ifstream in(std::string(CT_TEST_DATA_DIR) + "/adam_reference.pt", std::ios::binary);
  const std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return torch::jit::pickle_load(bytes).toGenericDict();
}

std::vector<at::Tensor> Tensors(const c10::IValue& list) {
  std::vector<at::Tensor> out;
  for (const c10::IValue& item : list.toListRef()) out.push_back(item.toTensor());
  return out;
}

// Buckets as GradientSync lays them out: parameters {2, 0} in one flat buffer, {1} in another,
// each .grad aliasing its place.
std::vector<GradientBucket> TwoBuckets(const std::vector<at::Tensor>& params) {
  std::vector<GradientBucket> buckets = {{{2, 0}, {}}, {{1}, {}}};
  for (GradientBucket& bucket : buckets) {
    int64_t elements = 0;
    for (size_t i : bucket.params) elements += params[i].numel();
    bucket.grads = at::zeros({elements});
    int64_t offset = 0;
    for (size_t i : bucket.params) {
      params[i].mutable_grad() = bucket.grads.narrow(0, offset, params[i].numel()).view(params[i].sizes());
      offset += params[i].numel();
    }
  }
  return buckets;
}

double RelativeDifference(const at::Tensor& a, const at::Tensor& b) {
  return ((a - b).abs().max() / b.abs().max()).item<double>();
}

// How the test steps the optimizer: Step(lr) unfused or fused, or StepOnDevice(lr tensor) as a
// CUDA graph's replay does (the step count advanced by the kernels, the lr read from a tensor).
enum class Update { kPasses, kFused, kOnDevice };

void CheckAgainst(const std::string& name, double weight_decay, Update update) {
  const bool fused = update != Update::kPasses;
  const c10::impl::GenericDict reference = LoadReference();
  std::vector<at::Tensor> params;
  for (const at::Tensor& t : Tensors(reference.at("initial"))) params.push_back(t.clone().requires_grad_(true));
  AdamSettings settings;
  settings.weight_decay = weight_decay;
  settings.fused = fused;
  FlatAdam adam(params, TwoBuckets(params), settings);
  ASSERT_EQ(adam.Fused(), fused);
  const at::Tensor lrs = reference.at("lrs").toTensor();
  const c10::IValue grads = reference.at("grads");
  for (int64_t step = 0; step < lrs.size(0); ++step) {
    adam.ZeroGrad();
    const std::vector<at::Tensor> g = Tensors(grads.toListRef()[static_cast<size_t>(step)]);
    for (size_t i = 0; i < params.size(); ++i) params[i].grad().add_(g[i]);  // as backward accumulates
    if (update == Update::kOnDevice) {
      const at::Tensor lr = at::full({}, lrs[step].item<double>(), at::kFloat);
      adam.StepOnDevice(lr);
      adam.CountStep();
    } else {
      adam.Step(lrs[step].item<double>());
    }
  }
  const c10::impl::GenericDict expected = reference.at(name).toGenericDict();
  const auto want_params = Tensors(expected.at("params")), want_m = Tensors(expected.at("exp_avg")),
             want_v = Tensors(expected.at("exp_avg_sq"));
  EXPECT_EQ(adam.Steps(), 100);
  for (size_t i = 0; i < params.size(); ++i) {
    // float32 rounding over 100 steps: the same elementwise arithmetic, perhaps another order of
    // vectorised and scalar lanes.
    EXPECT_LT(RelativeDifference(params[i].detach(), want_params[i]), 1e-5) << name << " parameter " << i;
    EXPECT_LT(RelativeDifference(adam.ExpAvg(i), want_m[i]), 1e-5) << name << " exp_avg " << i;
    EXPECT_LT(RelativeDifference(adam.ExpAvgSq(i), want_v[i]), 1e-5) << name << " exp_avg_sq " << i;
  }
  // The parameters are views of the flat buffers: the model trains what the optimizer updates.
  EXPECT_EQ(params[2].storage().data(), params[0].storage().data());
  EXPECT_NE(params[1].storage().data(), params[0].storage().data());
}

TEST(FlatAdam, EqualsTorchOptimAdamOver100Steps) { CheckAgainst("adam", 0.0, Update::kPasses); }

TEST(FlatAdam, EqualsTorchOptimAdamWOver100Steps) { CheckAgainst("adamw", 0.1, Update::kPasses); }

// LibTorch's fused kernel (at::_fused_adam_, _fused_adamw_) over the same flat buffers.
TEST(FlatAdam, FusedEqualsTorchOptimAdamOver100Steps) {
  if (!FlatAdam::HasFusedKernel(c10::Device(c10::kCPU))) GTEST_SKIP() << "no fused CPU Adam before LibTorch 2.4";
  CheckAgainst("adam", 0.0, Update::kFused);
}

TEST(FlatAdam, FusedEqualsTorchOptimAdamWOver100Steps) {
  if (!FlatAdam::HasFusedKernel(c10::Device(c10::kCPU))) GTEST_SKIP() << "no fused CPU Adam before LibTorch 2.4";
  CheckAgainst("adamw", 0.1, Update::kFused);
}

// The CUDA graph's update, run eagerly on the CPU: same kernel, lr and step count on the device.
TEST(FlatAdam, OnDeviceCountersEqualTorchOptimAdamAndAdamW) {
  if (!FlatAdam::HasFusedKernel(c10::Device(c10::kCPU))) GTEST_SKIP() << "no fused CPU Adam before LibTorch 2.4";
  CheckAgainst("adam", 0.0, Update::kOnDevice);
  CheckAgainst("adamw", 0.1, Update::kOnDevice);
}

TEST(FlatAdam, WithoutDecayAdamWIsNotAdam) {
  // The two references differ, so each test above can tell them apart.
  const c10::impl::GenericDict reference = LoadReference();
  const auto adam = Tensors(reference.at("adam").toGenericDict().at("params"));
  const auto adamw = Tensors(reference.at("adamw").toGenericDict().at("params"));
  EXPECT_GT(RelativeDifference(adam[0], adamw[0]), 1e-3);
}

}  // namespace
}  // namespace ct
