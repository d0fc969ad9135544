#include "util/atomic_file.h"

#include <fcntl.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <optional>

#include "util/error.h"
#include "util/human_bytes.h"

namespace ct {
namespace {

std::string SystemError(const std::string& action, const std::string& path) {
  return action + " '" + path + "' failed: " + std::strerror(errno);
}

void FsyncPath(const std::string& path, int flags) {
  int fd = ::open(path.c_str(), flags);
  if (fd < 0) throw Error(SystemError("opening", path));
  int rc = ::fsync(fd);
  ::close(fd);
  // Some file systems (and directories on some of them) do not support fsync; that is not an
  // error worth failing a run for, anything else is.
  if (rc != 0 && errno != EINVAL && errno != EROFS) throw Error(SystemError("fsync of", path));
}

// The bytes an unprivileged writer may still put on the file system holding `dir`, where it says.
std::optional<double> FreeBytes(const std::filesystem::path& dir) {
  struct statvfs fs {};
  if (statvfs(dir.c_str(), &fs) != 0) return std::nullopt;
  return static_cast<double>(fs.f_bavail) * static_cast<double>(fs.f_frsize);
}

}  // namespace

std::string TemporaryPathFor(const std::string& path) { return path + ".tmp"; }

std::string DiskFullNote(const std::string& path) {
  const std::filesystem::path dir = std::filesystem::absolute(path).parent_path();
  const std::optional<double> free_bytes = FreeBytes(dir);
  if (!free_bytes || *free_bytes >= (4 << 20)) return "";
  return "the file system holding '" + dir.string() + "' is full (" +
         std::to_string(static_cast<long long>(*free_bytes) >> 10) + " KiB free): free space there or write elsewhere";
}

std::string SpaceProblem(const std::string& path, double bytes) {
  const std::filesystem::path dir = std::filesystem::absolute(path).parent_path();
  const std::optional<double> free_bytes = FreeBytes(dir);
  if (!free_bytes || bytes <= *free_bytes) return "";
  return "'" + path + "' would take " + HumanBytes(bytes) + ", but the file system holding '" + dir.string() +
         "' has " + HumanBytes(*free_bytes) + " free: write less, or write it elsewhere";
}

void WriteTemporaryOrRemoveIt(const std::string& who, const std::string& path, bool remove_temporary,
                              const std::function<void()>& write) {
  try {
    write();
  } catch (const DataError& e) {
    if (remove_temporary) std::remove(TemporaryPathFor(path).c_str());
    const std::string full = DiskFullNote(path);
    throw DataError(who + ": cannot write '" + path + "': " + (full.empty() ? std::string(e.what()) : full),
                    e.Agreed());
  }
}

void CommitTemporaryFile(const std::string& path) {
  const std::string tmp = TemporaryPathFor(path);
  FsyncPath(tmp, O_RDONLY);
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    throw Error(SystemError("renaming '" + tmp + "' to", path));
  }
  std::filesystem::path dir = std::filesystem::path(path).parent_path();
  FsyncPath(dir.empty() ? "." : dir.string(), O_RDONLY | O_DIRECTORY);
}

void WriteFileAtomically(const std::string& path, std::string_view bytes) {
  const std::string tmp = TemporaryPathFor(path);
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) throw Error(SystemError("creating", tmp) + "; check that the directory exists and is writable");
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      std::string msg = SystemError("writing", tmp);
      ::close(fd);
      ::unlink(tmp.c_str());
      throw Error(msg + " (disk full or quota exceeded?)");
    }
    done += static_cast<size_t>(n);
  }
  if (::close(fd) != 0) {
    std::string msg = SystemError("closing", tmp);
    ::unlink(tmp.c_str());
    throw Error(msg + " (disk full or quota exceeded?)");
  }
  CommitTemporaryFile(path);
}

}  // namespace ct
