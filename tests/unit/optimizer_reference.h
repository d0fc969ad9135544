// PyTorch's own optimizers over 100 recorded steps (tests/data/optimizer_reference.pt, written by
// tests/data/make_optimizer_reference.py), and the flat layout the tests run ours in.
#pragma once

#include <ATen/ATen.h>
#include <torch/csrc/jit/serialization/pickle.h>

#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "comm/gradient_sync.h"
#include "train/optimizer.h"

namespace ct::test {

inline c10::impl::GenericDict LoadOptimizerReference() {
  std::ifstream in(std::string(CT_TEST_DATA_DIR) + "/optimizer_reference.pt", std::ios::binary);
  const std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return torch::jit::pickle_load(bytes).toGenericDict();
}

inline std::vector<at::Tensor> Tensors(const c10::IValue& list) {
  std::vector<at::Tensor> out;
  for (const c10::IValue& item : list.toListRef()) out.push_back(item.toTensor());
  return out;
}

// The reference's initial parameters, as trainable copies.
inline std::vector<at::Tensor> InitialParams(const c10::impl::GenericDict& reference) {
  std::vector<at::Tensor> params;
  for (const at::Tensor& t : Tensors(reference.at("initial"))) params.push_back(t.clone().requires_grad_(true));
  return params;
}

// Buckets as GradientSync lays them out: parameters {2, 0} in one flat buffer, {1} in another,
// each .grad aliasing its place.
inline std::vector<GradientBucket> TwoBuckets(const std::vector<at::Tensor>& params) {
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

inline double RelativeDifference(const at::Tensor& a, const at::Tensor& b) {
  return ((a - b).abs().max() / b.abs().max()).item<double>();
}

// Step `step` of the recorded run: its gradients into the buffers, as backward accumulates them.
inline void SetRecordedGradients(Optimizer& optimizer, const std::vector<at::Tensor>& params,
                                 const c10::impl::GenericDict& reference, int64_t step) {
  optimizer.ZeroGrad();
  const std::vector<at::Tensor> g = Tensors(reference.at("grads").toListRef()[static_cast<size_t>(step)]);
  for (size_t i = 0; i < params.size(); ++i) params[i].grad().add_(g[i]);
}

// The optimizer's parameters and every state tensor against reference `name`'s, to float32
// rounding over 100 steps (the same elementwise arithmetic, perhaps another order of vectorised
// and scalar lanes).
inline void ExpectLikeReference(const Optimizer& optimizer, const std::vector<at::Tensor>& params,
                                const c10::impl::GenericDict& reference, const std::string& name) {
  const c10::impl::GenericDict expected = reference.at(name).toGenericDict();
  const std::vector<at::Tensor> want_params = Tensors(expected.at("params"));
  const std::vector<std::string> names = optimizer.StateNames();
  for (size_t i = 0; i < params.size(); ++i) {
    EXPECT_LT(RelativeDifference(params[i].detach(), want_params[i]), 1e-5) << name << " parameter " << i;
    for (size_t k = 0; k < names.size(); ++k) {
      const at::Tensor want = Tensors(expected.at(names[k]))[i];
      EXPECT_LT(RelativeDifference(optimizer.State(i, k), want), 1e-5) << name << " " << names[k] << " " << i;
    }
  }
  // The parameters are views of the flat buffers: the model trains what the optimizer updates.
  EXPECT_EQ(params[2].storage().data(), params[0].storage().data());
  EXPECT_NE(params[1].storage().data(), params[0].storage().data());
}

}  // namespace ct::test
