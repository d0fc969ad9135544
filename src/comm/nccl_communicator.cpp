#include "comm/nccl_communicator.h"

#include "cluster/mpi_check.h"
#include "comm/nccl_check.h"

namespace ct {

struct NcclCommunicator::State {
  ncclComm_t comm = nullptr;
  int device = 0;
};

namespace {

ncclDataType_t NcclType(const at::Tensor& tensor) {
  switch (tensor.scalar_type()) {
    case at::kFloat: return ncclFloat32;
    case at::kDouble: return ncclFloat64;
    case at::kHalf: return ncclFloat16;
    case at::kLong: return ncclInt64;
    case at::kInt: return ncclInt32;
#if defined(NCCL_VERSION_CODE) && NCCL_VERSION_CODE >= 21000
    case at::kBFloat16: return ncclBfloat16;
#endif
    default:
      throw CommError("NCCL backend: dtype " + std::string(c10::toString(tensor.scalar_type())) +
                      " is not supported (" + ProcessIdentity() + ")");
  }
}

void CheckTensor(const at::Tensor& tensor, int device, const char* op) {
  if (!tensor.is_cuda() || tensor.get_device() != device) {
    throw CommError(std::string("NCCL backend ") + op + ": tensor is on " + tensor.device().str() +
                    ", expected cuda:" + std::to_string(device) +
                    " (use runtime.backend=mpi for CPU tensors)");
  }
  if (!tensor.is_contiguous()) throw CommError(std::string("NCCL backend ") + op + ": tensor must be contiguous");
}

}  // namespace

NcclCommunicator::NcclCommunicator(MPI_Comm world, int device_index) : state_(std::make_unique<State>()) {
  MPI_CHECK(MPI_Comm_rank(world, &rank_));
  MPI_CHECK(MPI_Comm_size(world, &size_));
  state_->device = device_index;
  CUDA_CHECK(cudaSetDevice(device_index));
  ncclUniqueId id;
  if (rank_ == 0) NCCL_CHECK(ncclGetUniqueId(&id));
  MPI_CHECK(MPI_Bcast(&id, sizeof(id), MPI_BYTE, 0, world));
  NCCL_CHECK(ncclCommInitRank(&state_->comm, size_, id, rank_));
}

NcclCommunicator::~NcclCommunicator() {
  if (state_->comm) ncclCommDestroy(state_->comm);
}

void NcclCommunicator::AllReduceSum(at::Tensor& tensor) {
  CheckTensor(tensor, state_->device, "all-reduce");
  NCCL_CHECK(ncclAllReduce(tensor.data_ptr(), tensor.data_ptr(), static_cast<size_t>(tensor.numel()),
                           NcclType(tensor), ncclSum, state_->comm, /*stream=*/nullptr));
}

void NcclCommunicator::AllReduceAverage(at::Tensor& tensor) {
  CheckTensor(tensor, state_->device, "all-reduce");
  NCCL_CHECK(ncclAllReduce(tensor.data_ptr(), tensor.data_ptr(), static_cast<size_t>(tensor.numel()),
                           NcclType(tensor), ncclAvg, state_->comm, /*stream=*/nullptr));
}

void NcclCommunicator::Broadcast(at::Tensor& tensor, int root) {
  CheckTensor(tensor, state_->device, "broadcast");
  NCCL_CHECK(ncclBroadcast(tensor.data_ptr(), tensor.data_ptr(), static_cast<size_t>(tensor.numel()),
                           NcclType(tensor), root, state_->comm, /*stream=*/nullptr));
}

void NcclCommunicator::Abort() {
  if (state_->comm) {
    ncclCommAbort(state_->comm);
    state_->comm = nullptr;
  }
}

}  // namespace ct
