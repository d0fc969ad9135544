#include "util/error.h"

#include <c10/util/Exception.h>

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

std::string ExceptionText(const std::exception& e) {
  if (const auto* torch_error = dynamic_cast<const c10::Error*>(&e)) {
    // LibTorch's message may span lines (a TorchScript traceback); its last line holds the
    // error itself, and the "Exception raised from ..." location is C++ source, not for users.
    std::string text = torch_error->what_without_backtrace();
    const size_t raised = text.find("Exception raised from");
    if (raised != std::string::npos) text.erase(raised);
    while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
    return text;
  }
  return e.what();
}

}  // namespace ct
