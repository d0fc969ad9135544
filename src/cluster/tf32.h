// runtime.tf32: float32 matrix multiplies and convolutions on TF32 tensor cores (Ampere, sm_80,
// and later): inputs rounded to a 10-bit mantissa, products summed in float32, several times
// the float32 rate. PyTorch leaves it off for matmuls (torch.backends.cuda.matmul.allow_tf32)
// and on for cuDNN convolutions; clustertrain's auto turns both on where the GPU has TF32.
#pragma once

#include <c10/core/Device.h>

#include <optional>
#include <string>

#include "util/choices.h"

namespace ct {

struct Tf32Decision {
  bool enabled = false;
  std::string reason;  // for the start-up log: "runtime.tf32=auto: on (GPU sm_90)"
};

// compute_major: the GPU's compute capability major (8 = Ampere), unknown on CPU. Pure.
Tf32Decision DecideTf32(AutoOnOff choice, const c10::Device& device, std::optional<int> compute_major);

// Sets LibTorch's TF32 switches for cuBLAS and cuDNN to the decision, and returns it.
Tf32Decision ApplyTf32(AutoOnOff choice, const c10::Device& device);

}  // namespace ct
