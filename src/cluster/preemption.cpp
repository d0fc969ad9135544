#include "cluster/preemption.h"

#include <csignal>
#include <cstdlib>
#include <string>

#include "util/error.h"

namespace ct {
namespace {

volatile std::sig_atomic_t g_requested = 0;
volatile std::sig_atomic_t g_interrupted = 0;

extern "C" void OnPreemptionSignal(int signal_number) {
  if (g_requested) {
    // Second signal: stop now, by the signal's default action.
    std::signal(signal_number, SIG_DFL);
    std::raise(signal_number);
    return;
  }
  if (signal_number == SIGINT) g_interrupted = 1;
  g_requested = 1;
}

// SIGINT only where it is not ignored: a shell starts background jobs with SIGINT ignored, so
// that a Ctrl-C meant for the shell's foreground leaves them alone.
bool SigintIgnored() {
  struct sigaction current {};
  return sigaction(SIGINT, nullptr, &current) == 0 && current.sa_handler == SIG_IGN;
}

}  // namespace

void InstallPreemptionHandlers() {
  struct sigaction action {};
  action.sa_handler = OnPreemptionSignal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;
  sigaction(SIGTERM, &action, nullptr);
  sigaction(SIGUSR1, &action, nullptr);
}

void InstallInterruptHandler() {
  if (SigintIgnored()) return;
  struct sigaction action {};
  action.sa_handler = OnPreemptionSignal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;
  sigaction(SIGINT, &action, nullptr);
}

bool PreemptionRequested() { return g_requested != 0; }
bool InterruptRequested() { return g_interrupted != 0; }

void IgnoreFurtherPreemptionSignals() {
  struct sigaction action {};
  action.sa_handler = SIG_IGN;
  sigemptyset(&action.sa_mask);
  sigaction(SIGTERM, &action, nullptr);
  sigaction(SIGUSR1, &action, nullptr);
  sigaction(SIGINT, &action, nullptr);
}

}  // namespace ct

namespace ct {

int64_t TestHoldStep() {
  const char* value = std::getenv("CT_TEST_HOLD_AT_STEP");
  if (value == nullptr || *value == '\0') return -1;
  char* end = nullptr;
  const long long step = std::strtoll(value, &end, 10);
  if (*end != '\0' || step <= 0) {
    throw ConfigError(std::string("CT_TEST_HOLD_AT_STEP=") + value +
                      ": expected a global step number > 0; unset it outside preemption tests");
  }
  return step;
}

}  // namespace ct
