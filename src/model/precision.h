// train.precision=bf16: forward passes run under LibTorch's autocast, which runs matmuls and
// convolutions in bfloat16 and keeps parameters, gradients, optimizer state and the loss in
// float32 (as torch.autocast does in Python). Backward runs outside the scope, as in PyTorch.
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/core/DeviceType.h>
#include <c10/core/ScalarType.h>
#include <c10/util/Optional.h>

namespace ct {

// The dtype a built-in layer's CPU path (float32 parameters) computes in for the input `x`:
// float32 without autocast (x float32), bfloat16 under bf16 autocast (x float32 or bfloat16, cast
// as autocast casts it); none where LibTorch's own path must run.
c10::optional<at::ScalarType> CpuLayerDtype(const at::Tensor& x);

// t in `dtype`: t itself where it already is (as t.to(dtype) returns, without an operator call:
// the layers' float32 path makes several per layer and step).
inline at::Tensor InDtype(const at::Tensor& t, at::ScalarType dtype) {
  return t.scalar_type() == dtype ? t : t.to(dtype);
}

class AutocastScope {
 public:
  // Does nothing unless `enabled`. device: where the forward runs (CPU or CUDA).
  AutocastScope(bool enabled, c10::DeviceType device);
  ~AutocastScope();
  AutocastScope(const AutocastScope&) = delete;
  AutocastScope& operator=(const AutocastScope&) = delete;

 private:
  bool enabled_;
  c10::DeviceType device_;
  bool was_enabled_ = false;
  c10::ScalarType previous_dtype_ = c10::kFloat;
};

}  // namespace ct
