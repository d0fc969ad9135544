#include "cluster/placement.h"

#include <torch/cuda.h>

#include <cstdlib>

#include "cluster/agree.h"
#include "cluster/blas_info.h"
#include "cluster/gather_strings.h"
#include "cluster/gpu_assignment.h"
#include "cluster/gpu_pci.h"
#include "cluster/openblas_kernel.h"
#include "cluster/rank_lines.h"
#include "cluster/tf32.h"
#include "util/error.h"
#include "util/logging.h"

namespace ct {
namespace {

#ifdef CT_TORCH_CUDA
constexpr bool kLibTorchHasCuda = true;
#else
constexpr bool kLibTorchHasCuda = false;
#endif

// What CUDA_VISIBLE_DEVICES says, for messages about GPUs not seen.
std::string VisibleDevicesVariable() {
  const char* value = std::getenv("CUDA_VISIBLE_DEVICES");
  return value == nullptr ? "CUDA_VISIBLE_DEVICES is not set" : "CUDA_VISIBLE_DEVICES='" + std::string(value) + "'";
}

// Whether this rank trains on a GPU (train.device; auto: when LibTorch sees one).
bool UseCuda(DeviceChoice requested) {
  const bool cuda = torch::cuda::is_available() && torch::cuda::device_count() > 0;
  if (requested == DeviceChoice::kCuda && !cuda) {
    if (!kLibTorchHasCuda) {
      throw ConfigError(
          "train.device=cuda, but this LibTorch has no CUDA; use train.device=cpu or build against a CUDA LibTorch");
    }
    throw ConfigError("train.device=cuda, but this process sees no GPU (" + VisibleDevicesVariable() +
                      "); run it on a GPU node with GPUs given to the job (Slurm: --gpus-per-node=N or "
                      "--gres=gpu:N), or use train.device=cpu");
  }
  return requested != DeviceChoice::kCpu && cuda;
}

// The GPUs this process sees, as "id,id,..." (bus ids; device numbers where the CUDA runtime
// is not linked, which only a single-GPU build without NCCL meets).
std::string VisibleGpus() {
  std::vector<std::string> ids = VisibleGpuBusIds();
  if (ids.empty()) {
    for (int d = 0; d < static_cast<int>(torch::cuda::device_count()); ++d) ids.push_back("cuda:" + std::to_string(d));
  }
  std::string text;
  for (const std::string& id : ids) text += (text.empty() ? "" : ",") + id;
  return text;
}

std::vector<std::string> Split(const std::string& text) {
  std::vector<std::string> items;
  for (size_t start = 0; start < text.size();) {
    size_t end = text.find(',', start);
    if (end == std::string::npos) end = text.size();
    items.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return items;
}

// Every rank trains on the same kind of device: NCCL's set-up on the ranks with GPUs would
// otherwise meet MPI's collectives on those without, and the job would hang.
void AgreeOnDeviceKind(const MpiWorld& world, bool cuda) {
  std::vector<std::string> hosts;
  std::vector<bool> uses_gpu;
  for (const std::string& rank : AllGatherStrings(world.Comm(), std::string(cuda ? "1" : "0") + world.Host())) {
    uses_gpu.push_back(rank[0] == '1');
    hosts.push_back(rank.substr(1));
  }
  if (const std::string problem = DeviceKindMismatch(hosts, uses_gpu); !problem.empty()) {
    throw ConfigError(problem, /*agreed=*/true);
  }
}

}  // namespace

Placement PlaceThisRank(const Config& config, const MpiWorld& world) {
  Placement placement;
  bool cuda = false;
  RunAgreed(world, [&] { cuda = UseCuda(config.train.device); });
  // Every local rank's view of the node's GPUs (a node's ranks agree on using CUDA or not).
  std::vector<std::vector<std::string>> visible;
  for (const std::string& list : AllGatherStrings(world.LocalComm(), cuda ? VisibleGpus() : "")) {
    visible.push_back(Split(list));
  }
  GpuAssignment gpus;
  RunAgreed(world, [&] {
    if (cuda) gpus = AssignGpus(visible, world.LocalRank(), world.Host());
  });
  AgreeOnDeviceKind(world, cuda);  // across nodes (AssignGpus has checked each node's ranks)
  if (cuda) placement.device = c10::Device(c10::kCUDA, static_cast<c10::DeviceIndex>(gpus.device_index));
  placement.binding = BindThisRank(config.runtime, world, gpus.bus_id_by_local_rank);
  ReportBindings(world, placement.binding, placement.device.str());
  const Tf32Decision tf32 = ApplyTf32(config.runtime.tf32, placement.device);
  // Per rank, each line once with the ranks that have it: a job may mix nodes of different GPU
  // or CPU kinds, or with another BLAS installed.
  LogLinePerRanks(world, tf32.reason);
  if (!placement.device.is_cuda()) {  // every rank agrees on the device kind
    LogLinePerRanks(world, DescribeBlas());
    LogLinePerRanks(world, OpenBlasRestartNote());
    LogLinePerRanks(world, BlasMismatch(), LineLevel::kWarning);
  }
  return placement;
}

}  // namespace ct
