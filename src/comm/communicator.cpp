// The list of live communicators that the fatal path aborts (AbortAllCommunicators): each
// backend joins it on construction and leaves it first thing in its destructor.
#include "comm/communicator.h"

#include <algorithm>
#include <mutex>
#include <vector>

#include "util/error.h"

namespace ct {
namespace {
// The live communicators, for the fatal path. The hang watchdog aborts them from its own thread
// while the main thread may be making or destroying one: the list changes under a lock.
std::mutex live_mutex;
std::vector<Communicator*>& LiveCommunicators() {
  static std::vector<Communicator*> live;
  return live;
}
}  // namespace

Communicator::Communicator() {
  std::lock_guard<std::mutex> lock(live_mutex);
  LiveCommunicators().push_back(this);
}

Communicator::~Communicator() { Unregister(); }

void Communicator::Unregister() {
  std::lock_guard<std::mutex> lock(live_mutex);
  auto& live = LiveCommunicators();
  live.erase(std::remove(live.begin(), live.end(), this), live.end());
}

std::vector<std::unique_ptr<Work>> Communicator::AllReduceAverageAsyncEach(const std::vector<at::Tensor>& tensors) {
  std::vector<std::unique_ptr<Work>> works;
  works.reserve(tensors.size());
  for (const at::Tensor& tensor : tensors) works.push_back(AllReduceAverageAsync(tensor));
  return works;
}

void Communicator::AllGatherShards(at::Tensor& /*flat*/) {
  throw CommError("the " + Name() +
                  " backend cannot all-gather shards (an optimizer split over ranks needs the mpi backend)");
}

NodeSharedBuffers Communicator::NodeSharedZeros(const std::vector<int64_t>& /*numels*/) {
  return {{}, "the " + Name() + " backend has no node-shared memory"};
}

// In whole units of 16 elements (a 64-byte cache line of float32): a part then starts where
// a vectorised loop over the whole buffer would be at a vector's start, so an elementwise update
// of the parts gives the numbers of one over the whole, bit for bit.
ShardRange ShardOf(int64_t numel, int rank, int size) {
  constexpr int64_t kUnit = 16;
  const int64_t units = (numel + kUnit - 1) / kUnit;
  const int64_t base = units / size, extra = units % size;
  const int64_t first = rank * base + std::min<int64_t>(rank, extra);
  const int64_t count = base + (rank < extra ? 1 : 0);
  return {std::min(numel, first * kUnit), std::min(numel, (first + count) * kUnit)};
}

void AbortAllCommunicators() {
  std::lock_guard<std::mutex> lock(live_mutex);
  for (Communicator* comm : LiveCommunicators()) comm->Abort();  // each bounded (Abort's contract)
}

}  // namespace ct
