#include "util/atomic_file.h"

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
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

// The process's file-size limit in bytes (ulimit -f; a batch system may set it per job), if any.
std::optional<double> FileSizeLimit() {
  struct rlimit limit {};
  if (getrlimit(RLIMIT_FSIZE, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) return std::nullopt;
  return static_cast<double>(limit.rlim_cur);
}

std::string FileSizeLimitNote() {
  return "it reached this process's file-size limit of " + HumanBytes(FileSizeLimit().value_or(0)) +
         " (ulimit -f): raise it (ulimit -f unlimited, or the batch system's file-size limit) or write less";
}

// Why a write failed, in the words of the user's fix: the errno as the system says it, and for a
// file that reached the file-size limit (EFBIG: main ignores SIGXFSZ, so the write returns it) the
// limit; else the usual suspects.
std::string WriteFailure(const std::string& action, const std::string& path) {
  if (errno == EFBIG && FileSizeLimit()) return action + " '" + path + "' failed: " + FileSizeLimitNote();
  return SystemError(action, path) + " (disk full or quota exceeded?)";
}

}  // namespace

std::string TemporaryPathFor(const std::string& path) { return path + ".tmp"; }

std::string NoRoomNote(const std::string& path) {
  struct stat written {};
  const std::optional<double> size_limit = FileSizeLimit();
  if (size_limit && ::stat(TemporaryPathFor(path).c_str(), &written) == 0 &&
      static_cast<double>(written.st_size) >= *size_limit) {
    return FileSizeLimitNote();
  }
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
    const std::string no_room = NoRoomNote(path);  // before the temporary, whose size it may read, goes
    if (remove_temporary) std::remove(TemporaryPathFor(path).c_str());
    throw DataError(who + ": cannot write '" + path + "': " + (no_room.empty() ? std::string(e.what()) : no_room),
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
      std::string msg = WriteFailure("writing", tmp);
      ::close(fd);
      ::unlink(tmp.c_str());
      throw Error(msg);
    }
    done += static_cast<size_t>(n);
  }
  if (::close(fd) != 0) {
    std::string msg = WriteFailure("closing", tmp);
    ::unlink(tmp.c_str());
    throw Error(msg);
  }
  CommitTemporaryFile(path);
}

}  // namespace ct
