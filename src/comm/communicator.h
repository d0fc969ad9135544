// Collective operations on tensors, behind one interface so that the trainer does not care
// whether gradients travel through MPI (CPU tensors) or NCCL (CUDA tensors).
#pragma once

#include <ATen/ATen.h>

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace ct {

// A collective in flight. Wait() makes its result usable by what the caller does next: the MPI
// backend blocks until the data has arrived; the NCCL backend only makes the compute stream
// wait for it (no host synchronisation). Wait() rethrows a failure of the operation.
class Work {
 public:
  virtual ~Work() = default;
  virtual void Wait() = 0;
  // After Wait(): when the operation completed, where the host sees it (MPI: the communication
  // thread's clock); nullopt where it completes on a device stream (NCCL). For the trace.
  virtual std::optional<std::chrono::steady_clock::time_point> DoneAt() const { return std::nullopt; }
};

// Buffers every rank of a communicator maps at once (Communicator::NodeSharedZeros).
struct NodeSharedBuffers {
  std::vector<at::Tensor> buffers;  // empty when they could not be had
  std::string why_not;              // then: why, naming the rank, the path and the fix
};

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
  // Starts AllReduceAverage and returns at once; `tensor` must not be touched until Wait().
  // Operations start in the order they are issued, which must be the same on every rank.
  virtual std::unique_ptr<Work> AllReduceAverageAsync(at::Tensor tensor) = 0;
  // AllReduceAverageAsync of each tensor, in order, one Work each. A backend may launch them as
  // one operation (NCCL: one group, one kernel launch); by default they go out one by one.
  virtual std::vector<std::unique_ptr<Work>> AllReduceAverageAsyncEach(const std::vector<at::Tensor>& tensors);
  // In place: every rank's tensor <- root's tensor.
  virtual void Broadcast(at::Tensor& tensor, int root) = 0;
  // Small values from every rank: result[r] is rank r's `tensor` (shape [Size(), ...]).
  virtual at::Tensor AllGather(const at::Tensor& tensor) = 0;
  // Returns when every rank has called it.
  virtual void Barrier() = 0;
  // In place, on every rank: each rank's ShardOf part of `flat` (1-d, contiguous) <- that rank's
  // values, so that every rank ends with the whole tensor. For an optimizer whose ranks each
  // updated one part (train/flat_adam.h). The MPI backend has it; others throw a CommError.
  virtual void AllGatherShards(at::Tensor& flat);
  // Collective: zero 1-d float32 CPU buffers of these sizes, the same memory on every rank, for
  // ranks that share a host (comm/node_shared_memory.h); or none, with why, on every rank. The
  // MPI backend has them; others answer none.
  virtual NodeSharedBuffers NodeSharedZeros(const std::vector<int64_t>& numels);

  // Best-effort teardown on the fatal path, so that no peer waits on this rank. Bounded: it
  // returns within seconds even where the library's abort waits for peers.
  virtual void Abort() {}

  // The part of a step where the device waits for collectives (around the gradient average).
  // NCCL measures it with CUDA events on the compute stream, where the host does not wait, and
  // TakeTimedSeconds() sums the epoch's spans once, at its end. Backends whose waits happen on
  // the host (MPI) return nullopt: the caller's host clock measures them.
  virtual void BeginTimedSpan() {}
  virtual void EndTimedSpan() {}
  virtual std::optional<double> TakeTimedSeconds() { return std::nullopt; }

 protected:
  // Leaves the list AbortAllCommunicators walks. Each backend calls it first in its destructor:
  // by the time the base destructor runs, the backend's state is gone, and the hang watchdog's
  // thread could otherwise call Abort() on it in between.
  void Unregister();
};

// Rank `rank`'s part of `numel` elements split over `size` ranks: [begin, end), in rank order,
// in whole units of 16 elements (the last may be shorter), the first ranks one unit more than the
// others where the units do not divide evenly.
struct ShardRange {
  int64_t begin = 0;
  int64_t end = 0;
};
ShardRange ShardOf(int64_t numel, int rank, int size);

// Calls Abort() on every live communicator (the fatal path in main).
void AbortAllCommunicators();

}  // namespace ct
