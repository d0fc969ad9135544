#include "data/file_identity.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <map>
#include <vector>

#include "cluster/gather_strings.h"
#include "cluster/mpi_check.h"
#include "util/error.h"

namespace ct {
namespace {

constexpr int64_t kSampledBytes = 64 << 10;  // at each end: the superblock and the newest metadata

void Fnv1a(const unsigned char* bytes, size_t n, uint64_t& hash) {
  for (size_t i = 0; i < n; ++i) hash = (hash ^ bytes[i]) * 0x100000001b3ULL;
}

bool HashRange(int fd, int64_t offset, int64_t length, uint64_t& hash) {
  std::vector<unsigned char> buffer(static_cast<size_t>(length));
  int64_t done = 0;
  while (done < length) {
    const ssize_t got = pread(fd, buffer.data() + done, static_cast<size_t>(length - done), offset + done);
    if (got <= 0) return false;
    done += got;
  }
  Fnv1a(buffer.data(), buffer.size(), hash);
  return true;
}

std::string ThisHost() {
  char name[MPI_MAX_PROCESSOR_NAME] = {0};
  int length = 0;
  MPI_Get_processor_name(name, &length);
  return std::string(name, static_cast<size_t>(length));
}

}  // namespace

std::string DescribeFileForIdentity(const std::string& path) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::string("cannot read it: ") + std::strerror(errno);
  struct stat info {};
  uint64_t hash = 0xcbf29ce484222325ULL;
  bool ok = fstat(fd, &info) == 0;
  const int64_t size = info.st_size;
  const int64_t head = std::min(size, kSampledBytes);
  ok = ok && HashRange(fd, 0, head, hash) &&
       HashRange(fd, size - std::min(size, kSampledBytes), std::min(size, kSampledBytes), hash);
  const int error = errno;
  close(fd);
  if (!ok) return std::string("cannot read it: ") + std::strerror(error);
  char text[96];
  std::snprintf(text, sizeof(text), "%" PRId64 " bytes, checksum %016" PRIx64, size, hash);
  return text;
}

void AgreeOnFileIdentity(const std::string& path, MPI_Comm comm) {
  int size = 1;
  MPI_CHECK(MPI_Comm_size(comm, &size));
  if (size == 1) return;
  const std::vector<std::string> seen = AllGatherStrings(comm, DescribeFileForIdentity(path));
  bool same = true;
  for (const std::string& s : seen) same = same && s == seen[0];
  if (same) return;
  const std::vector<std::string> hosts = AllGatherStrings(comm, ThisHost());
  // What each group of ranks sees, in the order of their lowest rank.
  std::vector<std::string> order;
  std::map<std::string, std::pair<std::string, std::string>> groups;  // view -> (ranks, hosts)
  for (size_t r = 0; r < seen.size(); ++r) {
    auto [it, fresh] = groups.try_emplace(seen[r]);
    if (fresh) order.push_back(seen[r]);
    auto& [ranks, group_hosts] = it->second;
    ranks += (ranks.empty() ? "" : ", ") + std::to_string(r);
    if (group_hosts.find(hosts[r]) == std::string::npos) group_hosts += (group_hosts.empty() ? "" : ", ") + hosts[r];
  }
  std::string views;
  for (const std::string& view : order) {
    const auto& [ranks, group_hosts] = groups[view];
    views += (views.empty() ? "" : "; ") + std::string(ranks.find(',') == std::string::npos ? "rank " : "ranks ") +
             ranks + " (" + group_hosts + "): " + view;
  }
  throw DataError("the ranks do not see the same file '" + path + "': " + views +
                  ". A node holds a stale or partial copy, or cannot reach the file: give every rank the same file "
                  "(a shared file system, or copy it again to each node)");
}

}  // namespace ct
