#include "cluster/placement.h"

#include <torch/cuda.h>

#include "cluster/agree.h"
#include "util/error.h"

namespace ct {
namespace {

c10::Device ChooseDevice(DeviceChoice requested, const MpiWorld& world) {
  const bool cuda = torch::cuda::is_available() && torch::cuda::device_count() > 0;
  if (requested == DeviceChoice::kCuda && !cuda) {
    throw ConfigError("train.device=cuda, but " +
                      std::string(torch::cuda::is_available() ? "no GPU is visible" : "this LibTorch has no CUDA") +
                      "; use train.device=cpu or build against a CUDA LibTorch");
  }
  if (requested == DeviceChoice::kCpu || !cuda) return c10::Device(c10::kCPU);
  const auto count = static_cast<int>(torch::cuda::device_count());
  return c10::Device(c10::kCUDA, static_cast<c10::DeviceIndex>(world.LocalRank() % count));
}

}  // namespace

Placement PlaceThisRank(const Config& config, const MpiWorld& world) {
  Placement placement;
  RunAgreed(world, [&] { placement.device = ChooseDevice(config.train.device, world); });
  const int gpus = placement.device.is_cuda() ? static_cast<int>(torch::cuda::device_count()) : 0;
  placement.binding = BindThisRank(config.runtime, world, gpus);
  ReportBindings(world, placement.binding, placement.device.str());
  return placement;
}

}  // namespace ct
