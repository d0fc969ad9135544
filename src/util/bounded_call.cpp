#include "util/bounded_call.h"

#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>

namespace ct {

bool RunWithin(std::chrono::milliseconds limit, std::function<void()> call) {
  struct Shared {
    std::mutex mutex;
    std::condition_variable done_signal;
    bool done = false;
  };
  auto shared = std::make_shared<Shared>();  // outlives this frame if the call does not return
  std::thread([shared, call = std::move(call)] {
    call();
    std::lock_guard<std::mutex> lock(shared->mutex);
    shared->done = true;
    shared->done_signal.notify_all();
  }).detach();
  std::unique_lock<std::mutex> lock(shared->mutex);
  return shared->done_signal.wait_for(lock, limit, [&] { return shared->done; });
}

}  // namespace ct
