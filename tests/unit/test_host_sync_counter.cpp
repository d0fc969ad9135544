// The test hook behind "no host sync inside the loop" (tests/e2e/run_outputs.sh) must see a sync
// when there is one, or that test could not fail.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include "train/host_sync_counter.h"

namespace ct {
namespace {

TEST(HostSyncCounter, CountsTensorsReadAsHostNumbers) {
  HostSyncCounter counter;
  counter.Take();
  const at::Tensor t = at::ones({4});
  EXPECT_EQ(counter.Take(), 0);
  (void)(t * 2).sum();  // stays a tensor: no sync
  EXPECT_EQ(counter.Take(), 0);
  (void)t.sum().item<float>();  // item(): the host waits for the value
  EXPECT_EQ(counter.Take(), 1);
  (void)t.sum().gt(0).is_nonzero();  // a tensor used as a bool
  EXPECT_EQ(counter.Take(), 1);
}

}  // namespace
}  // namespace ct
