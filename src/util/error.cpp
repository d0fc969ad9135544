#include "util/error.h"

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

}  // namespace ct
