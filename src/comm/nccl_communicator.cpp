#include "comm/nccl_communicator.h"

#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>
#include <thread>

#include "cluster/mpi_check.h"
#include "comm/nccl_check.h"
#include "util/logging.h"
#ifdef CT_TORCH_CUDA
#include <c10/cuda/CUDAStream.h>
#endif

namespace ct {
namespace {

using Clock = std::chrono::steady_clock;

ncclDataType_t NcclType(const at::Tensor& tensor) {
  switch (tensor.scalar_type()) {
    case at::kFloat:
      return ncclFloat32;
    case at::kDouble:
      return ncclFloat64;
    case at::kHalf:
      return ncclFloat16;
    case at::kLong:
      return ncclInt64;
    case at::kInt:
      return ncclInt32;
#if defined(NCCL_VERSION_CODE) && NCCL_VERSION_CODE >= 21000
    case at::kBFloat16:
      return ncclBfloat16;
#endif
    default:
      throw CommError("NCCL backend: dtype " + std::string(c10::toString(tensor.scalar_type())) +
                      " is not supported (" + ProcessIdentity() + ")");
  }
}

void CheckTensor(const at::Tensor& tensor, int device, const char* op) {
  if (!tensor.is_cuda() || tensor.get_device() != device) {
    throw CommError(std::string("NCCL backend ") + op + ": tensor is on " + tensor.device().str() +
                    ", expected cuda:" + std::to_string(device) + " (use runtime.backend=mpi for CPU tensors)");
  }
  if (!tensor.is_contiguous()) throw CommError(std::string("NCCL backend ") + op + ": tensor must be contiguous");
}

// LibTorch's current stream on `device`: the stream the gradients were computed on.
cudaStream_t ComputeStream(int device) {
#ifdef CT_TORCH_CUDA
  return c10::cuda::getCurrentCUDAStream(static_cast<c10::DeviceIndex>(device)).stream();
#else
  (void)device;
  return cudaStreamLegacy;  // a LibTorch without CUDA cannot make CUDA tensors: unreachable
#endif
}

}  // namespace

// The events of one collective: `start` completes when it begins on the communication
// stream, `end` when it has finished. Destroyed when the last holder lets go.
struct NcclEvents {
  cudaEvent_t start = nullptr;
  cudaEvent_t end = nullptr;
  std::string op;
  std::optional<Clock::time_point> started;  // when the watchdog first saw `start` complete
  NcclEvents(std::string name) : op(std::move(name)) {
    CUDA_CHECK(cudaEventCreateWithFlags(&start, cudaEventDisableTiming));
    CUDA_CHECK(cudaEventCreateWithFlags(&end, cudaEventDisableTiming));
  }
  ~NcclEvents() {
    cudaEventDestroy(start);
    cudaEventDestroy(end);
  }
};

struct NcclCommunicator::State {
  ncclComm_t comm = nullptr;
  int device = 0;
  cudaStream_t stream = nullptr;  // the communication stream
  double timeout_seconds = 300;

  std::mutex mutex;  // guards pending and stopping
  std::condition_variable changed;
  std::deque<std::shared_ptr<NcclEvents>> pending;
  bool stopping = false;
  std::thread watchdog;

  // Runs `collective` on the communication stream after the compute stream's work so far.
  std::shared_ptr<NcclEvents> Launch(const std::string& op, const std::function<void(cudaStream_t)>& collective) {
    auto events = std::make_shared<NcclEvents>(op);
    cudaEvent_t ready = nullptr;
    CUDA_CHECK(cudaEventCreateWithFlags(&ready, cudaEventDisableTiming));
    CUDA_CHECK(cudaEventRecord(ready, ComputeStream(device)));
    CUDA_CHECK(cudaStreamWaitEvent(stream, ready, 0));
    cudaEventDestroy(ready);  // released once it completes
    CUDA_CHECK(cudaEventRecord(events->start, stream));
    collective(stream);
    CUDA_CHECK(cudaEventRecord(events->end, stream));
    {
      std::lock_guard<std::mutex> lock(mutex);
      pending.push_back(events);
    }
    return events;
  }

  // The compute stream waits for the collective's end (no host synchronisation).
  void OrderAfter(const NcclEvents& events) const {
    CUDA_CHECK(cudaStreamWaitEvent(ComputeStream(device), events.end, 0));
  }

  [[noreturn]] void Fail(const std::string& what) {
    spdlog::error("{} ({}); aborting the NCCL communicator and ending this rank (exit {})", what, ProcessIdentity(),
                  static_cast<int>(kExitComm));
    spdlog::default_logger()->flush();
    ncclCommAbort(comm);
    std::_Exit(kExitComm);
  }

  void Watch() {
    cudaSetDevice(device);  // the current device is per thread
    std::unique_lock<std::mutex> lock(mutex);
    while (!changed.wait_for(lock, std::chrono::milliseconds(100), [&] { return stopping; })) {
      ncclResult_t async_error = ncclSuccess;
      ncclCommGetAsyncError(comm, &async_error);
      if (async_error != ncclSuccess
#if defined(NCCL_VERSION_CODE) && NCCL_VERSION_CODE >= 21400
          && async_error != ncclInProgress
#endif
      ) {
        Fail(std::string("NCCL reported an asynchronous error: ") + ncclGetErrorString(async_error) +
             "; a peer rank or the network failed (NCCL_DEBUG=WARN tells more)");
      }
      while (!pending.empty() && cudaEventQuery(pending.front()->end) == cudaSuccess) pending.pop_front();
      const auto now = Clock::now();
      for (auto& events : pending) {
        if (!events->started && cudaEventQuery(events->start) == cudaSuccess) events->started = now;
        if (!events->started) break;  // later collectives start after this one
        const double seconds = std::chrono::duration<double>(now - *events->started).count();
        if (seconds > timeout_seconds) {
          Fail("NCCL " + events->op + " has not finished " + std::to_string(static_cast<int>(seconds)) +
               " s after it started: a peer rank died, hangs or is far behind (runtime.comm_timeout_s=" +
               std::to_string(timeout_seconds) + ")");
        }
      }
    }
  }
};

namespace {

class NcclWork : public Work {
 public:
  explicit NcclWork(std::function<void()> wait) : wait_(std::move(wait)) {}
  void Wait() override {
    if (wait_) wait_();
    wait_ = nullptr;
  }

 private:
  std::function<void()> wait_;
};

}  // namespace

NcclCommunicator::NcclCommunicator(MPI_Comm world, int device_index, double timeout_seconds)
    : state_(std::make_unique<State>()) {
  MPI_CHECK(MPI_Comm_rank(world, &rank_));
  MPI_CHECK(MPI_Comm_size(world, &size_));
  state_->device = device_index;
  state_->timeout_seconds = timeout_seconds;
  CUDA_CHECK(cudaSetDevice(device_index));
  ncclUniqueId id;
  if (rank_ == 0) NCCL_CHECK(ncclGetUniqueId(&id));
  MPI_CHECK(MPI_Bcast(&id, sizeof(id), MPI_BYTE, 0, world));
  NCCL_CHECK(ncclCommInitRank(&state_->comm, size_, id, rank_));
  CUDA_CHECK(cudaStreamCreateWithFlags(&state_->stream, cudaStreamNonBlocking));
  state_->watchdog = std::thread([state = state_.get()] { state->Watch(); });
}

NcclCommunicator::~NcclCommunicator() {
  // Finish outstanding collectives while the watchdog still guards them, then stop it.
  if (state_->stream && state_->comm) cudaStreamSynchronize(state_->stream);
  {
    std::lock_guard<std::mutex> lock(state_->mutex);
    state_->stopping = true;
  }
  state_->changed.notify_all();
  if (state_->watchdog.joinable()) state_->watchdog.join();
  state_->pending.clear();
  if (state_->comm) ncclCommDestroy(state_->comm);
  if (state_->stream) cudaStreamDestroy(state_->stream);
}

// One ncclAllReduce of `tensor` with `op`, launched after the compute stream's work so far.
std::shared_ptr<NcclEvents> NcclCommunicator::LaunchAllReduce(const at::Tensor& tensor, int op) {
  CheckTensor(tensor, state_->device, "all-reduce");
  return state_->Launch("all-reduce", [&](cudaStream_t stream) {
    NCCL_CHECK(ncclAllReduce(tensor.data_ptr(), tensor.data_ptr(), static_cast<size_t>(tensor.numel()),
                             NcclType(tensor), static_cast<ncclRedOp_t>(op), state_->comm, stream));
  });
}

void NcclCommunicator::AllReduceSum(at::Tensor& tensor) { state_->OrderAfter(*LaunchAllReduce(tensor, ncclSum)); }

void NcclCommunicator::AllReduceAverage(at::Tensor& tensor) { AllReduceAverageAsync(tensor)->Wait(); }

std::unique_ptr<Work> NcclCommunicator::AllReduceAverageAsync(at::Tensor tensor) {
  std::shared_ptr<NcclEvents> events = LaunchAllReduce(tensor, ncclAvg);
  State* state = state_.get();
  return std::make_unique<NcclWork>([state, events] { state->OrderAfter(*events); });
}

void NcclCommunicator::Broadcast(at::Tensor& tensor, int root) {
  CheckTensor(tensor, state_->device, "broadcast");
  auto events = state_->Launch("broadcast", [&](cudaStream_t stream) {
    NCCL_CHECK(ncclBroadcast(tensor.data_ptr(), tensor.data_ptr(), static_cast<size_t>(tensor.numel()),
                             NcclType(tensor), root, state_->comm, stream));
  });
  state_->OrderAfter(*events);
}

at::Tensor NcclCommunicator::AllGather(const at::Tensor& tensor) {
  CheckTensor(tensor, state_->device, "all-gather");
  std::vector<int64_t> shape = {size_};
  shape.insert(shape.end(), tensor.sizes().begin(), tensor.sizes().end());
  at::Tensor all = at::empty(shape, tensor.options());
  auto events = state_->Launch("all-gather", [&](cudaStream_t stream) {
    NCCL_CHECK(ncclAllGather(tensor.data_ptr(), all.data_ptr(), static_cast<size_t>(tensor.numel()), NcclType(tensor),
                             state_->comm, stream));
  });
  state_->OrderAfter(*events);
  return all;
}

void NcclCommunicator::Barrier() {
  at::Tensor token = at::zeros({1}, at::TensorOptions().dtype(at::kFloat).device(at::kCUDA, state_->device));
  AllReduceSum(token);
  // The one host wait here: the watchdog ends the process if a peer never arrives.
  CUDA_CHECK(cudaStreamSynchronize(state_->stream));
}

void NcclCommunicator::Abort() {
  if (state_->comm) {
    ncclCommAbort(state_->comm);
    state_->comm = nullptr;
  }
}

}  // namespace ct
