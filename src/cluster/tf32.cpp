#include "cluster/tf32.h"

#include <ATen/Context.h>

#include "cluster/gpu_pci.h"

namespace ct {

Tf32Decision DecideTf32(AutoOnOff choice, const c10::Device& device, std::optional<int> compute_major) {
  const std::string name = std::string("runtime.tf32=") + NameOf(choice) + ": ";
  if (!device.is_cuda()) return {false, name + "off (no effect on CPU)"};
  const std::string gpu = compute_major ? "GPU sm_" + std::to_string(*compute_major) + "x" : "GPU of unknown kind";
  const bool has_tf32 = compute_major && *compute_major >= 8;
  switch (choice) {
    case AutoOnOff::kOff:
      return {false, name + "off (" + gpu + ")"};
    case AutoOnOff::kOn:
      return {true, name + "on" + (has_tf32 ? " (" + gpu + ")" : " (" + gpu + " has no TF32: no effect)")};
    case AutoOnOff::kAuto:
    default:
      return {has_tf32, name + (has_tf32 ? "on (" + gpu + ")" : "off (" + gpu + " has no TF32)")};
  }
}

Tf32Decision ApplyTf32(AutoOnOff choice, const c10::Device& device) {
  std::optional<int> major;
  if (device.is_cuda()) major = GpuComputeMajor(device.index());
  const Tf32Decision decision = DecideTf32(choice, device, major);
  at::globalContext().setAllowTF32CuBLAS(decision.enabled);
  at::globalContext().setAllowTF32CuDNN(decision.enabled);
  return decision;
}

}  // namespace ct
