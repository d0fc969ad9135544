#include "util/test_stop.h"

#include <csignal>
#include <cstdlib>
#include <string>

#include "util/launcher_env.h"
#include "util/logging.h"

namespace ct {

void StopHereForATest(const char* phase) {
  const char* stop_at = std::getenv("CT_TEST_STOP_AT");
  if (stop_at == nullptr || std::string(stop_at) != phase) return;
  const char* stop_rank = std::getenv("CT_TEST_STOP_RANK");
  if (LauncherRank().value_or(0) != (stop_rank ? std::atoi(stop_rank) : 1)) return;
  spdlog::warn("stopping this rank at '{}' (CT_TEST_STOP_AT)", phase);
  std::raise(SIGSTOP);
}

}  // namespace ct
