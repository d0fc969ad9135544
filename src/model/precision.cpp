#include "model/precision.h"

#include <ATen/autocast_mode.h>
#include <torch/version.h>

namespace ct {
namespace {

// LibTorch 2.4 replaced the per-device functions (set_cpu_enabled, set_autocast_gpu_dtype, ...)
// with ones that take the device type; 1.13 has only the former.
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 4)
bool IsEnabled(c10::DeviceType d) { return at::autocast::is_autocast_enabled(d); }
void SetEnabled(c10::DeviceType d, bool on) { at::autocast::set_autocast_enabled(d, on); }
c10::ScalarType GetDtype(c10::DeviceType d) { return at::autocast::get_autocast_dtype(d); }
void SetDtype(c10::DeviceType d, c10::ScalarType t) { at::autocast::set_autocast_dtype(d, t); }
#else
bool IsEnabled(c10::DeviceType d) {
  return d == c10::kCUDA ? at::autocast::is_enabled() : at::autocast::is_cpu_enabled();
}
void SetEnabled(c10::DeviceType d, bool on) {
  if (d == c10::kCUDA) {
    at::autocast::set_enabled(on);
  } else {
    at::autocast::set_cpu_enabled(on);
  }
}
c10::ScalarType GetDtype(c10::DeviceType d) {
  return d == c10::kCUDA ? at::autocast::get_autocast_gpu_dtype() : at::autocast::get_autocast_cpu_dtype();
}
void SetDtype(c10::DeviceType d, c10::ScalarType t) {
  if (d == c10::kCUDA) {
    at::autocast::set_autocast_gpu_dtype(t);
  } else {
    at::autocast::set_autocast_cpu_dtype(t);
  }
}
#endif

}  // namespace

c10::optional<at::ScalarType> CpuLayerDtype(const at::Tensor& x) {
  if (!IsEnabled(c10::kCPU)) {
    if (x.scalar_type() != at::kFloat) return c10::nullopt;
    return at::kFloat;
  }
  if (GetDtype(c10::kCPU) != at::kBFloat16) return c10::nullopt;
  if (x.scalar_type() != at::kFloat && x.scalar_type() != at::kBFloat16) return c10::nullopt;
  return at::kBFloat16;
}

AutocastScope::AutocastScope(bool enabled, c10::DeviceType device) : enabled_(enabled), device_(device) {
  if (!enabled_) return;
  was_enabled_ = IsEnabled(device_);
  previous_dtype_ = GetDtype(device_);
  SetEnabled(device_, true);
  SetDtype(device_, c10::kBFloat16);
  at::autocast::increment_nesting();
}

AutocastScope::~AutocastScope() {
  if (!enabled_) return;
  // The outermost scope drops the cached bf16 copies of the weights: they change every step.
  if (at::autocast::decrement_nesting() == 0) at::autocast::clear_cache();
  SetEnabled(device_, was_enabled_);
  SetDtype(device_, previous_dtype_);
}

}  // namespace ct
