#include "comm/nccl_communicator.h"

#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <deque>
#include <exception>
#include <functional>
#include <mutex>
#include <optional>
#include <thread>
#include <utility>
#include <vector>

#include "cluster/mpi_check.h"
#include "comm/nccl_check.h"
#include "util/bounded_call.h"
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

// This thread's current CUDA device set to `device` for a scope, then restored. The current
// device is per thread, and autograd hooks, the watchdog and the fatal path run on threads of
// their own: events and streams must belong to this rank's GPU.
class DeviceGuard {
 public:
  explicit DeviceGuard(int device) {
    if (cudaGetDevice(&previous_) != cudaSuccess) previous_ = device;
    if (previous_ != device) cudaSetDevice(device);
    device_ = device;
  }
  ~DeviceGuard() {
    if (previous_ != device_) cudaSetDevice(previous_);
  }
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

 private:
  int previous_ = 0;
  int device_ = 0;
};

// ncclCommAbort can wait for peers: at most this long, then the caller exits without it.
constexpr auto kAbortLimit = std::chrono::seconds(10);

void AbortWithin(ncclComm_t comm, const char* why) {
  if (!comm) return;
  if (!RunWithin(kAbortLimit, [comm] { ncclCommAbort(comm); })) {
    spdlog::warn("ncclCommAbort ({}) did not return within {} s; going on without it", why,
                 static_cast<int>(kAbortLimit.count()));
  }
}

}  // namespace

// Events without timing, reused: making and destroying them for every collective would put
// driver calls on the step's path. Shared by the communicator and every NcclEvents, so it lives
// as long as the last of them; events are handed back on any thread.
class NcclEventPool {
 public:
  explicit NcclEventPool(int device) : device_(device) {}
  ~NcclEventPool() {
    DeviceGuard guard(device_);
    for (cudaEvent_t event : free_) cudaEventDestroy(event);
  }
  NcclEventPool(const NcclEventPool&) = delete;
  NcclEventPool& operator=(const NcclEventPool&) = delete;

  // The caller's current device must be the pool's (Launch holds a DeviceGuard).
  cudaEvent_t Take() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (!free_.empty()) {
        cudaEvent_t event = free_.back();
        free_.pop_back();
        return event;
      }
    }
    cudaEvent_t event = nullptr;
    CUDA_CHECK(cudaEventCreateWithFlags(&event, cudaEventDisableTiming));
    return event;
  }
  // Safe while work recorded on `event` is still pending: a later record replaces it, and the
  // waits already enqueued keep the record they saw.
  void Give(cudaEvent_t event) {
    std::lock_guard<std::mutex> lock(mutex_);
    free_.push_back(event);
  }

 private:
  int device_;
  std::mutex mutex_;
  std::vector<cudaEvent_t> free_;
};

// The events of one collective (or one group of them): `start` completes when it begins on the
// communication stream, `end` when it has finished. Back to the pool when the last holder lets go.
struct NcclEvents {
  std::shared_ptr<NcclEventPool> pool;
  cudaEvent_t start = nullptr;
  cudaEvent_t end = nullptr;
  std::string op;
  std::optional<Clock::time_point> started;  // when the watchdog first saw `start` complete
  NcclEvents(std::shared_ptr<NcclEventPool> events, std::string name)
      : pool(std::move(events)), start(pool->Take()), end(pool->Take()), op(std::move(name)) {}
  ~NcclEvents() {
    pool->Give(start);
    pool->Give(end);
  }
  NcclEvents(const NcclEvents&) = delete;
  NcclEvents& operator=(const NcclEvents&) = delete;
};

struct NcclCommunicator::State {
  ncclComm_t comm = nullptr;  // guarded by mutex: the watchdog polls it, Abort() takes it
  int device = 0;
  cudaStream_t stream = nullptr;  // the communication stream
  double timeout_seconds = 300;
  std::shared_ptr<NcclEventPool> event_pool;

  std::mutex mutex;  // guards comm, pending and stopping
  std::condition_variable changed;
  std::deque<std::shared_ptr<NcclEvents>> pending;
  bool stopping = false;
  std::thread watchdog;

  // Timed spans of the compute stream (BeginTimedSpan/EndTimedSpan): event pairs, reused every
  // epoch; the first `spans_used` are this epoch's. Only the training thread touches them.
  std::vector<std::pair<cudaEvent_t, cudaEvent_t>> spans;
  size_t spans_used = 0;

  // Runs `collective` on the communication stream after the compute stream's work so far.
  std::shared_ptr<NcclEvents> Launch(const std::string& op, const std::function<void(cudaStream_t)>& collective) {
    DeviceGuard guard(device);  // hooks may run this on autograd's threads
    // Inside a CUDA-graph capture (train/cuda_graph_step.h) the event waits below become the
    // graph's fork and join, and nothing runs yet: the watchdog gets no events to poll (querying
    // a captured event is an error); the hang watchdog guards replays.
    cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
    CUDA_CHECK(cudaStreamIsCapturing(ComputeStream(device), &capture));
    const bool capturing = capture != cudaStreamCaptureStatusNone;
    auto events = std::make_shared<NcclEvents>(event_pool, op);
    const cudaEvent_t ready = event_pool->Take();
    CUDA_CHECK(cudaEventRecord(ready, ComputeStream(device)));
    CUDA_CHECK(cudaStreamWaitEvent(stream, ready, 0));
    event_pool->Give(ready);  // the wait has taken its record
    if (!capturing) CUDA_CHECK(cudaEventRecord(events->start, stream));
    collective(stream);
    CUDA_CHECK(cudaEventRecord(events->end, stream));
    if (!capturing) {
      std::lock_guard<std::mutex> lock(mutex);
      pending.push_back(events);
    }
    return events;
  }

  // The compute stream waits for the collective's end (no host synchronisation).
  void OrderAfter(const NcclEvents& events) const {
    DeviceGuard guard(device);
    CUDA_CHECK(cudaStreamWaitEvent(ComputeStream(device), events.end, 0));
  }

  // The communicator, taken out under the lock: afterwards nobody else uses it.
  ncclComm_t TakeComm() {
    std::lock_guard<std::mutex> lock(mutex);
    stopping = true;
    changed.notify_all();
    return std::exchange(comm, nullptr);
  }

  // Called by the watchdog with `mutex` held. The message goes out first (logged and flushed),
  // then the abort, bounded: it can wait for peers that will never come.
  [[noreturn]] void Fail(const std::string& what) {
    spdlog::error("{} ({}); aborting the NCCL communicator and ending this rank (exit {})", what, ProcessIdentity(),
                  static_cast<int>(kExitComm));
    spdlog::default_logger()->flush();
    AbortWithin(std::exchange(comm, nullptr), "watchdog");
    std::_Exit(kExitComm);
  }

  // A collective's event: done, still running, or a CUDA error. A sticky error (a kernel on this
  // GPU faulted) makes every query fail: it is reported as itself, not as a dead peer.
  bool Finished(cudaEvent_t event, const NcclEvents& events) {
    const cudaError_t status = cudaEventQuery(event);
    if (status == cudaSuccess) return true;
    if (status == cudaErrorNotReady) return false;
    Fail(std::string("CUDA error while NCCL ") + events.op + " was in flight: " + cudaGetErrorName(status) + ": " +
         cudaGetErrorString(status) +
         " (an earlier kernel on this GPU failed; CUDA_LAUNCH_BLOCKING=1 or compute-sanitizer shows which)");
  }

  void Watch() {
    DeviceGuard guard(device);  // the current device is per thread
    std::unique_lock<std::mutex> lock(mutex);
    while (!changed.wait_for(lock, std::chrono::milliseconds(100), [&] { return stopping; })) {
      if (!comm) break;
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
      while (!pending.empty() && Finished(pending.front()->end, *pending.front())) pending.pop_front();
      const auto now = Clock::now();
      for (auto& events : pending) {
        if (!events->started && Finished(events->start, *events)) events->started = now;
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

  void StopWatchdog() {
    {
      std::lock_guard<std::mutex> lock(mutex);
      stopping = true;
    }
    changed.notify_all();
    if (watchdog.joinable()) watchdog.join();
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
  state_->event_pool = std::make_shared<NcclEventPool>(device_index);
  ncclUniqueId id;
  if (rank_ == 0) NCCL_CHECK(ncclGetUniqueId(&id));
  MPI_CHECK(MPI_Bcast(&id, sizeof(id), MPI_BYTE, 0, world));
  NCCL_CHECK(ncclCommInitRank(&state_->comm, size_, id, rank_));
  CUDA_CHECK(cudaStreamCreateWithFlags(&state_->stream, cudaStreamNonBlocking));
  state_->watchdog = std::thread([state = state_.get()] { state->Watch(); });
}

NcclCommunicator::~NcclCommunicator() {
  Unregister();
  DeviceGuard guard(state_->device);
  if (std::uncaught_exceptions() > 0) {
    // Unwinding to the fatal path: a peer may be dead, so neither wait for the stream nor
    // destroy the communicator (both can block for ever); abort it, bounded, and let the
    // fatal path print the error.
    AbortWithin(state_->TakeComm(), "unwinding");
    state_->StopWatchdog();
    return;
  }
  // Finish outstanding collectives while the watchdog still guards them, then stop it.
  if (state_->stream && state_->comm) cudaStreamSynchronize(state_->stream);
  state_->StopWatchdog();
  state_->pending.clear();
  for (auto& [begin, end] : state_->spans) {
    cudaEventDestroy(begin);
    cudaEventDestroy(end);
  }
  if (ncclComm_t comm = state_->TakeComm()) {
    if (!RunWithin(std::chrono::seconds(60), [comm] { ncclCommDestroy(comm); })) {
      spdlog::warn("ncclCommDestroy did not return within 60 s ({}); going on without it", ProcessIdentity());
    }
  }
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

// Several buckets complete at once (the last ones of a backward, or all of them without
// overlap): one NCCL group, so they go out as one launch, with one pair of events for all.
std::vector<std::unique_ptr<Work>> NcclCommunicator::AllReduceAverageAsyncEach(const std::vector<at::Tensor>& tensors) {
  if (tensors.size() <= 1) return Communicator::AllReduceAverageAsyncEach(tensors);
  for (const at::Tensor& tensor : tensors) CheckTensor(tensor, state_->device, "all-reduce");
  std::shared_ptr<NcclEvents> events =
      state_->Launch("all-reduce of " + std::to_string(tensors.size()) + " tensors", [&](cudaStream_t stream) {
        NCCL_CHECK(ncclGroupStart());
        for (const at::Tensor& tensor : tensors) {
          NCCL_CHECK(ncclAllReduce(tensor.data_ptr(), tensor.data_ptr(), static_cast<size_t>(tensor.numel()),
                                   NcclType(tensor), ncclAvg, state_->comm, stream));
        }
        NCCL_CHECK(ncclGroupEnd());
      });
  State* state = state_.get();
  std::vector<std::unique_ptr<Work>> works;
  for (size_t i = 0; i < tensors.size(); ++i) {
    works.push_back(std::make_unique<NcclWork>([state, events] { state->OrderAfter(*events); }));
  }
  return works;
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

void NcclCommunicator::Abort() { AbortWithin(state_->TakeComm(), "fatal path"); }

// The span's events go on LibTorch's compute stream: Begin completes when backward's kernels
// have, End when the compute stream has waited for the last bucket's all-reduce.
void NcclCommunicator::BeginTimedSpan() {
  DeviceGuard guard(state_->device);
  if (state_->spans_used == state_->spans.size()) {
    std::pair<cudaEvent_t, cudaEvent_t> span;
    CUDA_CHECK(cudaEventCreate(&span.first));
    CUDA_CHECK(cudaEventCreate(&span.second));
    state_->spans.push_back(span);
  }
  CUDA_CHECK(cudaEventRecord(state_->spans[state_->spans_used].first, ComputeStream(state_->device)));
}

void NcclCommunicator::EndTimedSpan() {
  DeviceGuard guard(state_->device);
  CUDA_CHECK(cudaEventRecord(state_->spans[state_->spans_used++].second, ComputeStream(state_->device)));
}

// Once per epoch: waits for the last span's end (the epoch's end waits for the device anyway).
std::optional<double> NcclCommunicator::TakeTimedSeconds() {
  if (state_->spans_used == 0) return std::nullopt;  // none timed (a CUDA-graph step: see trainer.cpp)
  DeviceGuard guard(state_->device);
  double seconds = 0;
  for (size_t i = 0; i < state_->spans_used; ++i) {
    CUDA_CHECK(cudaEventSynchronize(state_->spans[i].second));
    float ms = 0;
    CUDA_CHECK(cudaEventElapsedTime(&ms, state_->spans[i].first, state_->spans[i].second));
    seconds += ms / 1000.0;
  }
  state_->spans_used = 0;
  return seconds;
}

}  // namespace ct
