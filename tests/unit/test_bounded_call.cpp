// RunWithin (util/bounded_call.h): a teardown call that blocks cannot hold up the fatal path.
#include <gtest/gtest.h>

#include <atomic>
#include <future>

#include "util/bounded_call.h"

namespace ct {
namespace {

TEST(BoundedCall, ReturnsTrueWhenTheCallFinishes) {
  std::atomic<bool> ran{false};
  EXPECT_TRUE(RunWithin(std::chrono::minutes(5), [&ran] { ran = true; }));
  EXPECT_TRUE(ran);
}

TEST(BoundedCall, ReturnsFalseWhileTheCallIsStillBlocked) {
  // The call waits for a release that comes only after RunWithin has given up on it (as an
  // ncclCommAbort waiting for a dead peer): RunWithin must return, and say that it gave up.
  auto release = std::make_shared<std::promise<void>>();
  auto finished = std::make_shared<std::promise<void>>();
  std::shared_future<void> released = release->get_future().share();
  std::future<void> was_finished = finished->get_future();
  EXPECT_FALSE(RunWithin(std::chrono::milliseconds(20), [released, finished] {
    released.wait();
    finished->set_value();
  }));
  release->set_value();  // let the detached thread end before the test does
  was_finished.wait();
}

}  // namespace
}  // namespace ct
