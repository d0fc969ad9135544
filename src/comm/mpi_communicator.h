// MPI backend: collectives on CPU tensors over an MPI communicator.
//
// Asynchronous all-reduces run on one communication thread, in the order they were issued, so
// that gradients travel while backward computes the next ones. MPI is initialised with
// MPI_THREAD_SERIALIZED: every blocking operation here first waits until that thread is idle,
// and callers make no MPI calls of their own while async work is outstanding (they Wait()).
// Without thread support from MPI, async operations run synchronously.
#pragma once

#include <mpi.h>

#include <condition_variable>
#include <deque>
#include <exception>
#include <mutex>
#include <thread>

#include "comm/communicator.h"

namespace ct {

class MpiCommunicator : public Communicator {
 public:
  explicit MpiCommunicator(MPI_Comm comm);
  ~MpiCommunicator() override;
  std::string Name() const override { return "mpi"; }
  int Rank() const override { return rank_; }
  int Size() const override { return size_; }
  void AllReduceSum(at::Tensor& tensor) override;
  void AllReduceAverage(at::Tensor& tensor) override;
  std::unique_ptr<Work> AllReduceAverageAsync(at::Tensor tensor) override;
  void Broadcast(at::Tensor& tensor, int root) override;
  at::Tensor AllGather(const at::Tensor& tensor) override;
  void Barrier() override;
  void AllGatherShards(at::Tensor& flat) override;
  NodeSharedBuffers NodeSharedZeros(const std::vector<int64_t>& numels) override;

 private:
  struct Job;
  class MpiWork;
  void Reduce(at::Tensor& tensor);  // the MPI_Allreduce itself, on the calling thread
  void Drain();                     // waits until the communication thread is idle
  void RunThread();

  MPI_Comm comm_;
  int rank_ = 0;
  int size_ = 1;

  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<std::shared_ptr<Job>> queue_;
  int running_ = 0;  // jobs taken off the queue and not yet finished
  bool stopping_ = false;
  std::thread thread_;  // started on the first async operation
};

}  // namespace ct
