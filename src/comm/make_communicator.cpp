#include "comm/make_communicator.h"

#include "comm/mpi_communicator.h"
#include "util/error.h"
#include "util/logging.h"
#ifdef CT_HAVE_NCCL
#include "comm/nccl_communicator.h"
#endif

namespace ct {

std::string BuiltBackends() {
#ifdef CT_HAVE_NCCL
  return "mpi, nccl";
#else
  return "mpi";
#endif
}

BackendChoice ChooseBackend(const RuntimeConfig& runtime, const c10::Device& device) {
  BackendChoice chosen = runtime.backend;
  if (chosen == BackendChoice::kAuto) chosen = device.is_cuda() ? BackendChoice::kNccl : BackendChoice::kMpi;
  if (chosen == BackendChoice::kMpi && device.is_cuda()) {
    throw ConfigError(
        "runtime.backend=mpi cannot reduce CUDA tensors in this version; use "
        "runtime.backend=auto (nccl) or train.device=cpu");
  }
#ifdef CT_HAVE_NCCL
  if (chosen == BackendChoice::kNccl && !device.is_cuda()) {
    throw ConfigError("runtime.backend=nccl needs train.device=cuda; CPU tensors use runtime.backend=mpi");
  }
#else
  if (chosen == BackendChoice::kNccl) {
    throw ConfigError("runtime.backend=nccl is not built into this binary (built: " + BuiltBackends() +
                      "); rebuild with NCCL and CUDA available (CMake -DCT_WITH_NCCL=ON) or use runtime.backend=mpi");
  }
#endif
  return chosen;
}

std::unique_ptr<Communicator> MakeCommunicator(const RuntimeConfig& runtime, const MpiWorld& world,
                                               const c10::Device& device) {
  const BackendChoice chosen = ChooseBackend(runtime, device);
  if (world.Rank() == 0) {
    spdlog::info("communication backend: {} (requested {})", NameOf(chosen), NameOf(runtime.backend));
  }
#ifdef CT_HAVE_NCCL
  if (chosen == BackendChoice::kNccl)
    return std::make_unique<NcclCommunicator>(world.Comm(), device.index(), runtime.comm_timeout_s);
#endif
  return std::make_unique<MpiCommunicator>(world.Comm());
}

std::unique_ptr<Communicator> MakeOptimizerShardCommunicator(const RuntimeConfig& runtime, const MpiWorld& world,
                                                             const c10::Device& device) {
  if (!runtime.shard_optimizer || !device.is_cpu() || world.LocalSize() < 2) return nullptr;
  return std::make_unique<MpiCommunicator>(world.LocalComm());
}

}  // namespace ct
