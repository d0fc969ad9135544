// NCCL backend: collectives on CUDA tensors. Compiled only when CMake finds NCCL and CUDA.
//
// Protocol at construction, step by step:
//   1. cudaSetDevice(device index) — before any NCCL call, so the communicator binds to it;
//   2. rank 0 creates an ncclUniqueId; MPI_Bcast sends it to every rank;
//   3. every rank calls ncclCommInitRank(world size, id, rank).
// Operations are enqueued on the device's legacy default stream, the stream LibTorch uses
// unless told otherwise, so they are ordered after the kernels that produced the gradients
// without any host synchronisation.
#pragma once

#include <mpi.h>

#include <memory>

#include "comm/communicator.h"

namespace ct {

class NcclCommunicator : public Communicator {
 public:
  NcclCommunicator(MPI_Comm world, int device_index);
  ~NcclCommunicator() override;
  std::string Name() const override { return "nccl"; }
  int Rank() const override { return rank_; }
  int Size() const override { return size_; }
  void AllReduceSum(at::Tensor& tensor) override;
  void AllReduceAverage(at::Tensor& tensor) override;
  void Broadcast(at::Tensor& tensor, int root) override;
  void Abort() override;

 private:
  struct State;  // keeps nccl.h out of this header
  std::unique_ptr<State> state_;
  int rank_ = 0;
  int size_ = 1;
};

}  // namespace ct
