#include "util/error.h"

#include <c10/util/Exception.h>

#include <new>

namespace ct {
namespace {
std::string& IdentityStorage() {
  static std::string identity = "rank ? (before MPI start-up)";
  return identity;
}
}  // namespace

void SetProcessIdentity(int rank, const std::string& host) {
  IdentityStorage() = "rank " + std::to_string(rank) + " on " + host;
}

const std::string& ProcessIdentity() { return IdentityStorage(); }

std::string Where(const char* file, int line) {
  return std::string(file) + ":" + std::to_string(line) + " (" + ProcessIdentity() + ")";
}

std::string FirstLine(const std::string& text) { return text.substr(0, text.find('\n')); }

bool IsOutOfMemory(const std::exception& e) {
  if (dynamic_cast<const std::bad_alloc*>(&e)) return true;
  const std::string text = e.what();
  return dynamic_cast<const c10::Error*>(&e) &&
         (text.find("can't allocate memory") != std::string::npos || text.find("out of memory") != std::string::npos);
}

std::string ExceptionText(const std::exception& e) {
  std::string text = e.what();
  if (const auto* torch_error = dynamic_cast<const c10::Error*>(&e)) {
    // LibTorch's message may span lines (a TorchScript traceback); its last line holds the
    // error itself, and the "Exception raised from ..." location is C++ source, not for users.
    text = torch_error->what_without_backtrace();
    const size_t raised = text.find("Exception raised from");
    if (raised != std::string::npos) text.erase(raised);
    // "[enforce fail at alloc_cpu.cpp:75] ": a place in LibTorch's source, not for users either.
    if (text.rfind("[enforce fail at ", 0) == 0 && text.find("] ") != std::string::npos) {
      text.erase(0, text.find("] ") + 2);
    }
    while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  }
  if (IsOutOfMemory(e)) {
    text = "out of memory (" + text +
           "): lower train.batch_size, make the model smaller (model.hidden, model.channels), or run fewer ranks "
           "per node";
  }
  return text;
}

}  // namespace ct
