// MPI backend: collectives on CPU tensors over MPI_COMM_WORLD.
#pragma once

#include <mpi.h>

#include "comm/communicator.h"

namespace ct {

class MpiCommunicator : public Communicator {
 public:
  explicit MpiCommunicator(MPI_Comm comm);
  std::string Name() const override { return "mpi"; }
  int Rank() const override { return rank_; }
  int Size() const override { return size_; }
  void AllReduceSum(at::Tensor& tensor) override;
  void AllReduceAverage(at::Tensor& tensor) override;
  void Broadcast(at::Tensor& tensor, int root) override;

 private:
  MPI_Comm comm_;
  int rank_ = 0;
  int size_ = 1;
};

}  // namespace ct
