// Collective operations on tensors, behind one interface so that the trainer does not care
// whether gradients travel through MPI (CPU tensors) or NCCL (CUDA tensors).
#pragma once

#include <ATen/ATen.h>

#include <string>

namespace ct {

class Communicator {
 public:
  Communicator();
  virtual ~Communicator();
  virtual std::string Name() const = 0;
  virtual int Rank() const = 0;
  virtual int Size() const = 0;

  // In place, on every rank: tensor <- sum (or mean) of tensor over all ranks.
  // The tensor must be contiguous and live on this backend's device type.
  virtual void AllReduceSum(at::Tensor& tensor) = 0;
  virtual void AllReduceAverage(at::Tensor& tensor) = 0;
  // In place: every rank's tensor <- root's tensor.
  virtual void Broadcast(at::Tensor& tensor, int root) = 0;

  // Best-effort teardown on the fatal path, so that no peer waits on this rank.
  virtual void Abort() {}
};

// Calls Abort() on every live communicator (the fatal path in main).
void AbortAllCommunicators();

}  // namespace ct
