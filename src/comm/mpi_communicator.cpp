#include "comm/mpi_communicator.h"

#include <algorithm>
#include <climits>

#include <c10/util/BFloat16.h>

#include "cluster/mpi_check.h"
#include "comm/node_shared_memory.h"
#include "util/error.h"
#include "util/trace.h"

namespace ct {
namespace {

// bfloat16 has no MPI type: 16-bit words, summed by an operation of our own (in float, rounded
// back to bfloat16 at each step of MPI's reduction).
void SumBFloat16(void* in, void* inout, int* count, MPI_Datatype*) {
  const auto* a = static_cast<const c10::BFloat16*>(in);
  auto* b = static_cast<c10::BFloat16*>(inout);
  for (int i = 0; i < *count; ++i) b[i] = c10::BFloat16(static_cast<float>(a[i]) + static_cast<float>(b[i]));
}

MPI_Op SumOp(const at::Tensor& tensor) {
  if (tensor.scalar_type() != at::kBFloat16) return MPI_SUM;
  static MPI_Op op = [] {
    MPI_Op created;
    MPI_CHECK(MPI_Op_create(SumBFloat16, /*commute=*/1, &created));
    return created;
  }();
  return op;
}

MPI_Datatype MpiType(const at::Tensor& tensor) {
  switch (tensor.scalar_type()) {
    case at::kFloat:
      return MPI_FLOAT;
    case at::kBFloat16:
      return MPI_UINT16_T;
    case at::kDouble:
      return MPI_DOUBLE;
    case at::kLong:
      return MPI_INT64_T;
    case at::kInt:
      return MPI_INT32_T;
    default:
      throw CommError("MPI backend: tensors of dtype " + std::string(c10::toString(tensor.scalar_type())) +
                      " are not supported (" + ProcessIdentity() + "); use float32, float64, bfloat16 or integers");
  }
}

void CheckTensor(const at::Tensor& tensor, const char* op) {
  if (!tensor.device().is_cpu()) {
    throw CommError(std::string("MPI backend ") + op + ": tensor is on " + tensor.device().str() +
                    "; the MPI backend handles CPU tensors (use runtime.backend=nccl for CUDA)");
  }
  if (!tensor.is_contiguous()) throw CommError(std::string("MPI backend ") + op + ": tensor must be contiguous");
}

// MPI counts are int: move large tensors in pieces of at most 2^30 elements.
template <class Fn>
void InPieces(const at::Tensor& tensor, Fn fn) {
  constexpr int64_t kPiece = int64_t{1} << 30;
  auto* base = static_cast<char*>(tensor.data_ptr());
  const int64_t element = static_cast<int64_t>(tensor.element_size());
  for (int64_t start = 0; start < tensor.numel(); start += kPiece) {
    const int64_t count = std::min(kPiece, tensor.numel() - start);
    fn(base + start * element, static_cast<int>(count));
  }
}

}  // namespace

struct MpiCommunicator::Job {
  at::Tensor tensor;
  bool done = false;
  std::chrono::steady_clock::time_point done_at;
  std::exception_ptr error;
};

class MpiCommunicator::MpiWork : public Work {
 public:
  MpiWork(MpiCommunicator& owner, std::shared_ptr<Job> job) : owner_(owner), job_(std::move(job)) {}
  void Wait() override {
    std::unique_lock<std::mutex> lock(owner_.mutex_);
    owner_.changed_.wait(lock, [&] { return job_->done; });
    if (job_->error) std::rethrow_exception(job_->error);
  }
  std::optional<std::chrono::steady_clock::time_point> DoneAt() const override {
    std::lock_guard<std::mutex> lock(owner_.mutex_);
    return job_->done ? std::optional(job_->done_at) : std::nullopt;
  }

 private:
  MpiCommunicator& owner_;
  std::shared_ptr<Job> job_;
};

MpiCommunicator::MpiCommunicator(MPI_Comm comm) : comm_(comm) {
  MPI_CHECK(MPI_Comm_rank(comm_, &rank_));
  MPI_CHECK(MPI_Comm_size(comm_, &size_));
}

MpiCommunicator::~MpiCommunicator() {
  Unregister();
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  changed_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void MpiCommunicator::Reduce(at::Tensor& tensor) {
  const MPI_Datatype type = MpiType(tensor);  // validated on one rank too, not only at scale
  if (size_ == 1) return;
  const MPI_Op op = SumOp(tensor);
  InPieces(tensor,
           [&](void* data, int count) { MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, data, count, type, op, comm_)); });
}

void MpiCommunicator::Drain() {
  std::unique_lock<std::mutex> lock(mutex_);
  changed_.wait(lock, [&] { return queue_.empty() && running_ == 0; });
}

void MpiCommunicator::RunThread() {
  trace::NameThisThread("MPI communication");
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    changed_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
    if (queue_.empty()) return;  // stopping, nothing left
    std::shared_ptr<Job> job = queue_.front();
    queue_.pop_front();
    ++running_;
    lock.unlock();
    try {
      trace::Span span("all-reduce", "comm");
      span.Set("bytes", job->tensor.numel() * static_cast<int64_t>(job->tensor.element_size()));
      Reduce(job->tensor);
      if (size_ > 1) job->tensor.div_(size_);
    } catch (...) {
      job->error = std::current_exception();
    }
    lock.lock();
    job->done = true;
    job->done_at = std::chrono::steady_clock::now();
    --running_;
    changed_.notify_all();
  }
}

void MpiCommunicator::AllReduceSum(at::Tensor& tensor) {
  CheckTensor(tensor, "all-reduce");
  Drain();
  Reduce(tensor);
}

void MpiCommunicator::AllReduceAverage(at::Tensor& tensor) {
  AllReduceSum(tensor);
  if (size_ > 1) tensor.div_(size_);
}

std::unique_ptr<Work> MpiCommunicator::AllReduceAverageAsync(at::Tensor tensor) {
  CheckTensor(tensor, "all-reduce");
  MpiType(tensor);  // an unsupported dtype fails here, not later on the thread
  auto job = std::make_shared<Job>();
  job->tensor = tensor;
  if (size_ == 1) {
    AllReduceAverage(job->tensor);
    job->done = true;
    job->done_at = std::chrono::steady_clock::now();
  } else {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!thread_.joinable()) thread_ = std::thread([this] { RunThread(); });
    queue_.push_back(job);
    changed_.notify_all();
  }
  return std::make_unique<MpiWork>(*this, std::move(job));
}

void MpiCommunicator::Broadcast(at::Tensor& tensor, int root) {
  CheckTensor(tensor, "broadcast");
  const MPI_Datatype type = MpiType(tensor);
  if (size_ == 1) return;
  Drain();
  InPieces(tensor, [&](void* data, int count) { MPI_CHECK(MPI_Bcast(data, count, type, root, comm_)); });
}

at::Tensor MpiCommunicator::AllGather(const at::Tensor& tensor) {
  CheckTensor(tensor, "all-gather");
  const MPI_Datatype type = MpiType(tensor);
  std::vector<int64_t> shape = {size_};
  shape.insert(shape.end(), tensor.sizes().begin(), tensor.sizes().end());
  at::Tensor all = at::empty(shape, tensor.options());
  if (tensor.numel() > INT_MAX)
    throw CommError("MPI backend all-gather: for small values, got " + std::to_string(tensor.numel()) + " elements");
  Drain();
  MPI_CHECK(MPI_Allgather(tensor.data_ptr(), static_cast<int>(tensor.numel()), type, all.data_ptr(),
                          static_cast<int>(tensor.numel()), type, comm_));
  return all;
}

void MpiCommunicator::AllGatherShards(at::Tensor& flat) {
  CheckTensor(flat, "all-gather of shards");
  const MPI_Datatype type = MpiType(flat);
  if (size_ == 1) return;
  // MPI's counts and offsets are int: a flat buffer up to 2^31 - 1 elements (8 GiB of float32).
  if (flat.numel() > INT_MAX) {
    throw CommError("MPI backend all-gather of shards: " + std::to_string(flat.numel()) +
                    " elements, more than MPI's int counts reach (" + ProcessIdentity() +
                    "); set runtime.shard_optimizer=false");
  }
  std::vector<int> counts(size_), offsets(size_);
  for (int r = 0; r < size_; ++r) {
    const ShardRange part = ShardOf(flat.numel(), r, size_);
    counts[r] = static_cast<int>(part.end - part.begin);
    offsets[r] = static_cast<int>(part.begin);
  }
  Drain();
  MPI_CHECK(
      MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, flat.data_ptr(), counts.data(), offsets.data(), type, comm_));
}

NodeSharedBuffers MpiCommunicator::NodeSharedZeros(const std::vector<int64_t>& numels) {
  Drain();
  return MapNodeSharedZeros(comm_, numels);
}

void MpiCommunicator::Barrier() {
  Drain();
  MPI_CHECK(MPI_Barrier(comm_));
}

}  // namespace ct
