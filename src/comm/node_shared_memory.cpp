#include "comm/node_shared_memory.h"

#include <dirent.h>
#include <fcntl.h>
#include <spdlog/fmt/fmt.h>
#include <sys/mman.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <memory>
#include <random>

#include "cluster/gather_strings.h"
#include "cluster/mpi_check.h"
#include "util/human_bytes.h"

namespace ct {
namespace {

constexpr const char* kShmDir = "/dev/shm";  // where glibc's shm_open keeps its segments on Linux
constexpr size_t kAlign = 64;                // each buffer starts on a cache line of its own

// One rank's mapping of the segment: unmapped when the last tensor on it is freed.
struct Mapping {
  void* base = MAP_FAILED;
  size_t bytes = 0;
  ~Mapping() {
    if (base != MAP_FAILED) munmap(base, bytes);
  }
};

std::string Failed(const std::string& what, int err) { return what + ": " + std::strerror(err); }

// A name no other segment on the host has: the creator's pid, a count and a random number (pid
// namespaces can repeat a pid on one host; O_EXCL catches whatever is left).
std::string SegmentName() {
  static std::atomic<int> count{0};
  std::random_device random;
  return fmt::format("/clustertrain-{}-{}-{:08x}", getpid(), count++, random());
}

// A name outlives its creator only if the creator died between creating it and every rank's
// mapping it (a rank failing during start-up), and then its pages hold the node's memory until
// it is unlinked. The node's first rank removes the names whose creator no longer runs before
// it creates its own. A process of another pid namespace that shares /dev/shm looks ended from
// here: removing its name in its few milliseconds of start-up only makes its ranks all-gather.
void RemoveSegmentsOfEndedProcesses() {
  DIR* dir = opendir(kShmDir);
  if (!dir) return;
  while (const dirent* entry = readdir(dir)) {
    int pid = 0;
    int end = 0;
    const std::string file = entry->d_name;
    if (std::sscanf(file.c_str(), "clustertrain-%d-%*d-%*8x%n", &pid, &end) != 1 ||
        end != static_cast<int>(file.size()) || pid <= 0) {
      continue;  // not a name of SegmentName's
    }
    if (kill(pid, 0) != 0 && errno == ESRCH) shm_unlink(("/" + file).c_str());  // EPERM: it runs
  }
  closedir(dir);
}

std::string MapFd(int fd, size_t bytes, const std::string& path, Mapping& map) {
  void* base = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (base == MAP_FAILED) return Failed("mmap " + path, errno);
  map.base = base;
  map.bytes = bytes;
  return "";
}

// The node's first rank creates the segment, reserves its pages (tmpfs pages read as zero) and
// maps it. Returns "" or why not.
std::string Create(const std::string& name, size_t bytes, Mapping& map) {
  const std::string path = kShmDir + name;
  struct statvfs fs {};
  if (statvfs(kShmDir, &fs) != 0) return Failed(std::string("statvfs ") + kShmDir, errno);
  const double free_bytes = static_cast<double>(fs.f_bavail) * static_cast<double>(fs.f_frsize);
  if (static_cast<double>(bytes) > free_bytes) {
    return fmt::format(
        "{} has {} free and the buffers need {}; give it more (docker run --shm-size, or the size= of its tmpfs mount)",
        kShmDir, HumanBytes(free_bytes), HumanBytes(static_cast<double>(bytes)));
  }
  const int fd = shm_open(name.c_str(), O_CREAT | O_EXCL | O_RDWR, 0600);
  if (fd < 0) return Failed("shm_open " + path, errno);
  std::string why;
  if (ftruncate(fd, static_cast<off_t>(bytes)) != 0) {
    why = Failed("ftruncate " + path, errno);
  } else if (const int err = posix_fallocate(fd, 0, static_cast<off_t>(bytes)); err != 0) {
    why = Failed("reserving " + HumanBytes(static_cast<double>(bytes)) + " for " + path, err);
  } else {
    why = MapFd(fd, bytes, path, map);
  }
  close(fd);
  if (!why.empty()) shm_unlink(name.c_str());
  return why;
}

// Every other rank of the node maps the segment the first one created.
std::string Open(const std::string& name, size_t bytes, Mapping& map) {
  const std::string path = kShmDir + name;
  const int fd = shm_open(name.c_str(), O_RDWR, 0);
  if (fd < 0) return Failed("shm_open " + path + " (is " + kShmDir + " one for all the node's ranks?)", errno);
  const std::string why = MapFd(fd, bytes, path, map);
  close(fd);
  return why;
}

}  // namespace

NodeSharedBuffers MapNodeSharedZeros(MPI_Comm comm, const std::vector<int64_t>& numels) {
  int rank = 0, size = 1;
  MPI_CHECK(MPI_Comm_rank(comm, &rank));
  MPI_CHECK(MPI_Comm_size(comm, &size));
  std::vector<size_t> offsets;
  size_t bytes = 0;
  for (int64_t n : numels) {
    offsets.push_back(bytes);
    bytes += (static_cast<size_t>(n) * sizeof(float) + kAlign - 1) / kAlign * kAlign;
  }
  bytes = std::max(bytes, kAlign);  // mmap of nothing fails

  // Rank 0 creates the segment and sends its name, or "!" and why it could not, to the others.
  auto map = std::make_shared<Mapping>();
  std::string why;
  std::string name;
  if (rank == 0) {
    RemoveSegmentsOfEndedProcesses();
    name = SegmentName();
    why = Create(name, bytes, *map);
  }
  const std::string created = BroadcastString(comm, why.empty() ? name : "!" + why, 0);
  const bool was_created = created.front() != '!';
  if (rank != 0 && was_created) why = Open(created, bytes, *map);

  // Every rank has tried: the name can go, and the lowest rank that failed tells all why.
  int first_failed = why.empty() ? size : rank;
  MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &first_failed, 1, MPI_INT, MPI_MIN, comm));
  if (rank == 0 && was_created) shm_unlink(created.c_str());
  NodeSharedBuffers result;
  if (first_failed < size) {
    result.why_not = fmt::format("rank {} of the node: {}", first_failed, BroadcastString(comm, why, first_failed));
    return result;  // `map` unmaps what this rank mapped
  }
  for (size_t i = 0; i < numels.size(); ++i) {
    void* data = static_cast<char*>(map->base) + offsets[i];
    result.buffers.push_back(at::from_blob(
        data, {numels[i]}, [map](void*) {}, at::TensorOptions().dtype(at::kFloat)));
  }
  return result;
}

}  // namespace ct
