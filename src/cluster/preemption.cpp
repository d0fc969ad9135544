#include "cluster/preemption.h"

#include <csignal>

namespace ct {
namespace {

volatile std::sig_atomic_t g_requested = 0;

extern "C" void OnPreemptionSignal(int signal_number) {
  if (g_requested) {
    // Second signal: stop now, by the signal's default action.
    std::signal(signal_number, SIG_DFL);
    std::raise(signal_number);
    return;
  }
  g_requested = 1;
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

bool PreemptionRequested() { return g_requested != 0; }

}  // namespace ct
