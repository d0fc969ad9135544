#include "comm/mpi_communicator.h"

#include <algorithm>
#include <climits>

#include "cluster/mpi_check.h"
#include "util/error.h"

namespace ct {
namespace {

MPI_Datatype MpiType(const at::Tensor& tensor) {
  switch (tensor.scalar_type()) {
    case at::kFloat: return MPI_FLOAT;
    case at::kDouble: return MPI_DOUBLE;
    case at::kLong: return MPI_INT64_T;
    case at::kInt: return MPI_INT32_T;
    default:
      throw CommError("MPI backend: tensors of dtype " + std::string(c10::toString(tensor.scalar_type())) +
                      " are not supported (" + ProcessIdentity() + "); use float32, float64 or integers");
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

MpiCommunicator::MpiCommunicator(MPI_Comm comm) : comm_(comm) {
  MPI_CHECK(MPI_Comm_rank(comm_, &rank_));
  MPI_CHECK(MPI_Comm_size(comm_, &size_));
}

void MpiCommunicator::AllReduceSum(at::Tensor& tensor) {
  CheckTensor(tensor, "all-reduce");
  const MPI_Datatype type = MpiType(tensor);  // validated on one rank too, not only at scale
  if (size_ == 1) return;
  InPieces(tensor, [&](void* data, int count) {
    MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, data, count, type, MPI_SUM, comm_));
  });
}

void MpiCommunicator::AllReduceAverage(at::Tensor& tensor) {
  AllReduceSum(tensor);
  if (size_ > 1) tensor.div_(size_);
}

void MpiCommunicator::Broadcast(at::Tensor& tensor, int root) {
  CheckTensor(tensor, "broadcast");
  const MPI_Datatype type = MpiType(tensor);
  if (size_ == 1) return;
  InPieces(tensor, [&](void* data, int count) { MPI_CHECK(MPI_Bcast(data, count, type, root, comm_)); });
}

}  // namespace ct
