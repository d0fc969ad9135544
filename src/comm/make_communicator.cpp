#include "comm/make_communicator.h"

#include <algorithm>
#include <mutex>
#include <vector>

#include "comm/mpi_communicator.h"
#include "util/error.h"
#include "util/logging.h"
#ifdef CT_HAVE_NCCL
#include "comm/nccl_communicator.h"
#endif

namespace ct {
namespace {
// The live communicators, for the fatal path. The hang watchdog aborts them from its own thread
// while the main thread may be making or destroying one: the list changes under a lock.
std::mutex live_mutex;
std::vector<Communicator*>& LiveCommunicators() {
  static std::vector<Communicator*> live;
  return live;
}
}  // namespace

Communicator::Communicator() {
  std::lock_guard<std::mutex> lock(live_mutex);
  LiveCommunicators().push_back(this);
}

Communicator::~Communicator() { Unregister(); }

void Communicator::Unregister() {
  std::lock_guard<std::mutex> lock(live_mutex);
  auto& live = LiveCommunicators();
  live.erase(std::remove(live.begin(), live.end(), this), live.end());
}

void AbortAllCommunicators() {
  std::lock_guard<std::mutex> lock(live_mutex);
  for (Communicator* comm : LiveCommunicators()) comm->Abort();  // each bounded (Abort's contract)
}

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

}  // namespace ct
