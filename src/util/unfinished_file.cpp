#include "util/unfinished_file.h"

#include <unistd.h>

#include <atomic>
#include <csignal>
#include <cstring>
#include <vector>

namespace ct {
namespace {

// Read by the signal handler, which may neither allocate nor lock: a fixed buffer, published
// by a flag that is set only once the buffer holds the whole path.
constexpr size_t kMaxPath = 4096;
char g_path[kMaxPath];
std::atomic<bool> g_has_path{false};
static_assert(std::atomic<bool>::is_always_lock_free, "the signal handler reads this flag");

void Say(const char* text) {
  if (::write(STDERR_FILENO, text, std::strlen(text)) < 0) {
    // Nothing to do about it from a signal handler.
  }
}

const char* SignalName(int signal_number) {
  switch (signal_number) {
    case SIGINT:
      return "SIGINT (Ctrl-C)";
    case SIGTERM:
      return "SIGTERM";
    case SIGUSR1:
      return "SIGUSR1";
    case SIGHUP:
      return "SIGHUP";
    default:
      return "a signal";
  }
}

extern "C" void RemoveUnfinishedAndEnd(int signal_number) {
  // Only async-signal-safe calls here: unlink, write, sigaction (via signal), raise.
  if (g_has_path.load(std::memory_order_acquire) && ::unlink(g_path) == 0) {
    Say("clustertrain: stopped by ");
    Say(SignalName(signal_number));
    Say("; removed the unfinished '");
    Say(g_path);
    Say("'\n");
  }
  std::signal(signal_number, SIG_DFL);
  std::raise(signal_number);
}

bool Ignored(int signal_number) {
  struct sigaction current {};
  return sigaction(signal_number, nullptr, &current) == 0 && current.sa_handler == SIG_IGN;
}

// A path longer than Linux's PATH_MAX could not have been created: nothing to remove.
void Publish(const std::string& path) noexcept {
  g_has_path.store(false, std::memory_order_release);
  if (path.empty() || path.size() >= kMaxPath) return;
  std::memcpy(g_path, path.c_str(), path.size() + 1);
  g_has_path.store(true, std::memory_order_release);
}

std::string Published() { return g_has_path.load(std::memory_order_acquire) ? std::string(g_path) : std::string(); }

}  // namespace

void InstallStopSignalCleanup() {
  std::vector<int> handled = {SIGTERM, SIGUSR1};
  for (const int inherited : {SIGHUP, SIGINT}) {
    if (!Ignored(inherited)) handled.push_back(inherited);
  }
  struct sigaction action {};
  action.sa_handler = RemoveUnfinishedAndEnd;
  sigemptyset(&action.sa_mask);
  for (const int signal_number : handled) sigaddset(&action.sa_mask, signal_number);  // one handler at a time
  for (const int signal_number : handled) sigaction(signal_number, &action, nullptr);
}

UnfinishedFile::UnfinishedFile(const std::string& path) : previous_(Published()) { Publish(path); }

UnfinishedFile::~UnfinishedFile() { Publish(previous_); }

}  // namespace ct
