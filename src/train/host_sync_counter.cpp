#include "train/host_sync_counter.h"

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <memory>

namespace ct {
namespace {

std::atomic<int64_t> host_syncs_seen{0};

bool IsHostTensor(const c10::IValue& value) { return value.isTensor() && value.toTensor().is_cpu(); }

std::unique_ptr<at::ObserverContext> CountIfSync(const at::RecordFunction& fn) {
  const char* name = fn.name();
  if (std::strcmp(name, "aten::_local_scalar_dense") == 0) {
    ++host_syncs_seen;
  } else if (std::strcmp(name, "aten::copy_") == 0) {
    const auto inputs = fn.inputs();  // copy_(self: the destination, src)
    if (inputs.size() >= 2 && IsHostTensor(inputs[0]) && inputs[1].isTensor() && !IsHostTensor(inputs[1]))
      ++host_syncs_seen;
  }
  return nullptr;
}

}  // namespace

bool HostSyncCounter::Requested() {
  const char* value = std::getenv("CT_TEST_COUNT_SYNCS");
  return value != nullptr && std::strcmp(value, "1") == 0;
}

HostSyncCounter::HostSyncCounter()
    : handle_(at::addGlobalCallback(at::RecordFunctionCallback(&CountIfSync).needsInputs(true))) {}

HostSyncCounter::~HostSyncCounter() { at::removeCallback(handle_); }

int64_t HostSyncCounter::Take() { return host_syncs_seen.exchange(0); }

}  // namespace ct
