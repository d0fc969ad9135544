// A test hook (CT_TEST_COUNT_SYNCS=1 in the environment): counts, in this process, the
// operations that make the host wait for the device -- a tensor read as a host number
// (aten::_local_scalar_dense: item(), a tensor used as a bool) and a copy from a device into host
// memory (aten::copy_ with a CPU destination and a non-CPU source) -- through LibTorch's
// RecordFunction callbacks. The trainer logs the count of each epoch, so a test can check that
// it does not grow with the epoch's steps (no host sync inside the loop). On a CPU device a
// .cpu() copies nothing; the count then covers the scalar reads.
#pragma once

#include <ATen/record_function.h>

#include <cstdint>

namespace ct {

class HostSyncCounter {
 public:
  static bool Requested();
  HostSyncCounter();  // installs the callback
  ~HostSyncCounter();
  HostSyncCounter(const HostSyncCounter&) = delete;
  HostSyncCounter& operator=(const HostSyncCounter&) = delete;

  // The count since the last call.
  int64_t Take();

 private:
  at::CallbackHandle handle_;
};

}  // namespace ct
