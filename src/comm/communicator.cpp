// The list of live communicators that the fatal path aborts (AbortAllCommunicators): each
// backend joins it on construction and leaves it first thing in its destructor.
#include "comm/communicator.h"

#include <algorithm>
#include <mutex>
#include <vector>

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

void AbortAllCommunicators() {
  std::lock_guard<std::mutex> lock(live_mutex);
  for (Communicator* comm : LiveCommunicators()) comm->Abort();  // each bounded (Abort's contract)
}

}  // namespace ct
