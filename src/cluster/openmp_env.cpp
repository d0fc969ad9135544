#include "cluster/openmp_env.h"

#include <unistd.h>

#include <cstdlib>
#include <initializer_list>

#include "cluster/hwloc_handles.h"

namespace ct {
namespace {

constexpr const char* kRemovedMarker = "CT_REMOVED_OMP_AFFINITY";

std::vector<std::string> SettingsOf(std::initializer_list<const char*> names) {
  std::vector<std::string> settings;
  for (const char* name : names) {
    if (const char* value = std::getenv(name)) settings.push_back(std::string(name) + "=" + value);
  }
  return settings;
}

}  // namespace

std::vector<std::string> OpenMpAffinitySettings() {
  return SettingsOf({"OMP_PROC_BIND", "OMP_PLACES", "GOMP_CPU_AFFINITY", "KMP_AFFINITY"});
}

void ReexecWithoutOpenMpAffinity(char** argv) {
  const std::vector<std::string> settings = OpenMpAffinitySettings();
  if (settings.empty() || std::getenv(kRemovedMarker)) return;
  std::string removed;
  for (const std::string& setting : settings) {
    removed += (removed.empty() ? "" : " ") + setting;
    unsetenv(setting.substr(0, setting.find('=')).c_str());
  }
  setenv(kRemovedMarker, removed.c_str(), 1);
  // The runtime has already pinned this thread (GOMP_CPU_AFFINITY=0: to CPU 0) and exec keeps
  // that pinning; the launcher's own mask is lost, so start again from all the cgroup allows.
  try {
    const Topology topology = Topology::ThisMachine(/*with_pci=*/false);
    hwloc_set_cpubind(topology.get(), topology.AllowedPus().get(), HWLOC_CPUBIND_PROCESS);
  } catch (const std::exception&) {
    // Without hwloc the re-executed process keeps the runtime's pinning; the report shows it.
  }
  execv("/proc/self/exe", argv);
  // exec failed: carry on with the variables (the report still shows the clamp).
  for (const std::string& setting : settings) {
    const auto eq = setting.find('=');
    setenv(setting.substr(0, eq).c_str(), setting.substr(eq + 1).c_str(), 1);
  }
  unsetenv(kRemovedMarker);
}

std::string RemovedOpenMpAffinity() {
  const char* removed = std::getenv(kRemovedMarker);
  return removed ? removed : "";
}

std::vector<std::string> ThreadCountSettings() {
  return SettingsOf({"OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"});
}

}  // namespace ct
