// NCCL backend: collectives on CUDA tensors. Compiled only when CMake finds NCCL and CUDA.
//
// Protocol at construction, step by step:
//   1. cudaSetDevice(device index) — before any NCCL call, so the communicator binds to it;
//   2. rank 0 creates an ncclUniqueId; MPI_Bcast sends it to every rank;
//   3. every rank calls ncclCommInitRank(world size, id, rank).
//
// Every collective runs on a communication stream beside LibTorch's compute stream (its current
// stream in a CUDA build): the communication stream waits for an event recorded on the compute
// stream, so the collective sees the finished gradients; waiting for the result makes the
// compute stream wait for the collective's end event. No host synchronisation either way, and
// gradient buckets reduce while backward computes the next ones. Buckets that complete together
// go out as one NCCL group (one launch). The events come from a pool and are reused.
//
// A watchdog thread polls ncclCommGetAsyncError and every collective's events. A network error,
// a CUDA error seen on an event (reported as that error), or a collective still running
// runtime.comm_timeout_s after it started (a peer died or hangs) logs what happened, flushes the
// log, aborts the communicator (ncclCommAbort, at most 10 s: it can wait for peers) and ends
// this process with exit code 4, which makes mpirun or srun end the other ranks. Destroyed while
// an exception unwinds to the fatal path, it aborts instead of waiting for its stream or peers.
// Every CUDA call runs under a guard for this rank's GPU: hooks and the watchdog have threads
// of their own, and the current device is per thread.
#pragma once

#include <mpi.h>

#include <memory>

#include "comm/communicator.h"

namespace ct {

struct NcclEvents;  // a collective's CUDA events (nccl_communicator.cpp)

class NcclCommunicator : public Communicator {
 public:
  NcclCommunicator(MPI_Comm world, int device_index, double timeout_seconds);
  ~NcclCommunicator() override;
  std::string Name() const override { return "nccl"; }
  int Rank() const override { return rank_; }
  int Size() const override { return size_; }
  void AllReduceSum(at::Tensor& tensor) override;
  void AllReduceAverage(at::Tensor& tensor) override;
  std::unique_ptr<Work> AllReduceAverageAsync(at::Tensor tensor) override;
  std::vector<std::unique_ptr<Work>> AllReduceAverageAsyncEach(const std::vector<at::Tensor>& tensors) override;
  void Broadcast(at::Tensor& tensor, int root) override;
  at::Tensor AllGather(const at::Tensor& tensor) override;
  void Barrier() override;
  void Abort() override;
  void BeginTimedSpan() override;
  void EndTimedSpan() override;
  std::optional<double> TakeTimedSeconds() override;

 private:
  struct State;  // keeps nccl.h and cuda_runtime.h out of this header
  // op: an ncclRedOp_t. Returns the collective's events (see the .cpp).
  std::shared_ptr<NcclEvents> LaunchAllReduce(const at::Tensor& tensor, int op);
  std::unique_ptr<State> state_;
  int rank_ = 0;
  int size_ = 1;
};

}  // namespace ct
