#include "run/run_directory.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "util/atomic_file.h"
#include "util/error.h"
#include "util/logging.h"

namespace fs = std::filesystem;

namespace ct {
namespace {

std::string Timestamp(const char* format) {
  const std::time_t now = std::time(nullptr);
  std::tm local{};
  localtime_r(&now, &local);
  char text[64];
  std::strftime(text, sizeof(text), format, &local);
  return text;
}

int64_t CountLines(const fs::path& file) {
  std::ifstream in(file);
  int64_t lines = 0;
  for (std::string line; std::getline(in, line);) lines += !line.empty();
  return lines;
}

void CreateDirectory(const std::string& dir, const std::string& what = "run directory") {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec || !fs::is_directory(dir)) {
    const bool file_in_way = fs::exists(dir) && !fs::is_directory(dir);
    throw ConfigError("cannot create " + what + " '" + dir + "': " +
                      (file_in_way ? std::string("a file of that name is in the way; move or remove it")
                                   : ec.message() + "; set output.dir to a writable path"));
  }
}

// The folders every rank and the checkpoint writer expect, made once here so that a file in the
// way is one clear message (not a filesystem error from every rank).
void CreateRunFolders(const std::string& dir) {
  CreateDirectory((fs::path(dir) / "logs").string(), "the run's log folder");
  CreateDirectory((fs::path(dir) / "checkpoints").string(), "the run's checkpoint folder");
}

// --overwrite moves `dir` away: an input inside it would go with it, and the run would fail to
// find it after the move. Checked before anything moves.
void RefuseInputsInside(const std::string& dir, const std::vector<std::pair<std::string, std::string>>& inputs) {
  std::error_code ec;
  const fs::path root = fs::weakly_canonical(dir, ec);
  if (ec) return;
  for (const auto& [key, input] : inputs) {
    const fs::path path = fs::weakly_canonical(input, ec);
    if (ec) continue;
    const auto [end, unused] = std::mismatch(root.begin(), root.end(), path.begin(), path.end());
    if (end == root.end()) {
      throw ConfigError("--overwrite would move the earlier run in '" + dir + "' aside, but the input '" + input +
                        "' (" + key + ") lies inside it; move the input out of the run directory first, or set " +
                        "output.dir to another directory");
    }
  }
}

// An flock on dir/run.lock, with the holder's identity written into the file; -1 when this file
// system has no locks (after a warning). Throws when another process holds it.
int LockRunDirectory(const std::string& dir) {
  const std::string path = dir + "/run.lock";
  const int fd = open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) {
    throw ConfigError("cannot create '" + path + "': " + std::strerror(errno) + "; set output.dir to a writable path");
  }
  if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
    const int error = errno;
    if (error != EWOULDBLOCK) {
      spdlog::warn(
          "cannot lock '{}' ({}): this file system has no file locks, so a second run into {} would not "
          "be detected",
          path, std::strerror(error), dir);
      close(fd);
      return -1;
    }
    std::ifstream in(path);
    std::string holder;
    std::getline(in, holder);
    close(fd);
    throw ConfigError("run directory '" + dir + "' is in use by another clustertrain run (" +
                      (holder.empty() ? std::string("holder unknown") : holder) +
                      "); wait for it to end, or set output.dir to another directory");
  }
  const std::string holder =
      ProcessIdentity() + ", pid " + std::to_string(getpid()) + ", since " + Timestamp("%Y-%m-%d %H:%M:%S") + "\n";
  if (ftruncate(fd, 0) != 0 || pwrite(fd, holder.data(), holder.size(), 0) != static_cast<ssize_t>(holder.size())) {
    spdlog::warn("cannot write the holder into '{}': {}", path, std::strerror(errno));
  }
  return fd;
}

// The entries of `dir` that no run wrote, sorted: a fresh run writes into a directory only if
// every entry in it is one a run makes (or a temporary of one), so that it never writes over a
// file of the user's, such as a config.yaml of their own. config.yaml counts as a run's only
// where run.lock shows that a run started there.
std::vector<std::string> ForeignEntries(const std::string& dir) {
  static const std::set<std::string> kRunEntries = {
      "run.lock",    "logs",     "checkpoints", "tensorboard", "trace",      "PREEMPTED",    "config.yaml",
      "metrics.csv", "model.pt", "best.pt",     "model.ts",    "curves.png", "metrics.jsonl"};
  std::error_code ec;
  const bool started = fs::exists(fs::path(dir) / "run.lock", ec);
  std::vector<std::string> foreign;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    const std::string base =
        name.size() > 4 && name.compare(name.size() - 4, 4, ".tmp") == 0 ? name.substr(0, name.size() - 4) : name;
    if (!kRunEntries.count(base) || (base == "config.yaml" && !started)) foreign.push_back(name);
  }
  std::sort(foreign.begin(), foreign.end());
  return foreign;
}

// dir.replaced-YYYYMMDD-HHMMSS (with -2, -3, ... if that exists too).
std::string MoveAside(const std::string& dir) {
  const std::string base = fs::path(dir).lexically_normal().string();
  const std::string stem =
      (base.back() == '/' ? base.substr(0, base.size() - 1) : base) + ".replaced-" + Timestamp("%Y%m%d-%H%M%S");
  std::string target = stem;
  for (int n = 2; fs::exists(target); ++n) target = stem + "-" + std::to_string(n);
  std::error_code ec;
  fs::rename(dir, target, ec);
  if (ec) {
    throw ConfigError("--overwrite: cannot move the earlier run in '" + dir + "' aside to '" + target +
                      "': " + ec.message() + "; move or remove it yourself, or set output.dir to another directory");
  }
  return target;
}

}  // namespace

std::string ExpandRunDirectory(const std::string& dir, int world_size) {
  auto env = [&](const char* name, const std::string& placeholder) {
    const char* value = std::getenv(name);
    if (value == nullptr || *value == '\0') {
      throw ConfigError("config key 'output.dir' ('" + dir + "') uses " + placeholder + ", but " + name +
                        " is not set: " + placeholder + " is for Slurm jobs" +
                        (placeholder == "{array_task}" ? " arrays (sbatch --array)" : "") +
                        "; remove it to run outside one");
    }
    return std::string(value);
  };
  std::string out;
  for (size_t at = 0; at < dir.size();) {
    const size_t open = dir.find('{', at);
    const size_t close = open == std::string::npos ? open : dir.find('}', open);
    if (close == std::string::npos) {
      out += dir.substr(at);
      break;
    }
    out += dir.substr(at, open - at);
    const std::string placeholder = dir.substr(open, close - open + 1);
    if (placeholder == "{job}") {
      out +=
          std::getenv("SLURM_ARRAY_JOB_ID") ? env("SLURM_ARRAY_JOB_ID", placeholder) : env("SLURM_JOB_ID", placeholder);
    } else if (placeholder == "{array_task}") {
      out += env("SLURM_ARRAY_TASK_ID", placeholder);
    } else if (placeholder == "{rank_count}") {
      out += std::to_string(world_size);
    } else {
      throw ConfigError("config key 'output.dir' ('" + dir + "') has an unknown placeholder " + placeholder +
                        ": the known ones are {job}, {array_task} and {rank_count}");
    }
    at = close + 1;
  }
  return out;
}

void MarkPreempted(const std::string& dir, const std::string& checkpoint) {
  const std::string text = "checkpoint: " + checkpoint + "\nstopped: " + Timestamp("%Y-%m-%d %H:%M:%S") +
                           "\nresume with: clustertrain train ... --resume auto\n";
  WriteFileAtomically((fs::path(dir) / "PREEMPTED").string(), text);
  if (const char* marker = std::getenv("CT_PREEMPTED_MARKER"); marker != nullptr && *marker != '\0') {
    WriteFileAtomically(marker, text);
  }
}

int64_t RecordedEpochs(const std::string& dir) { return CountLines(fs::path(dir) / "metrics.jsonl"); }

std::string RunContents(const std::string& dir) {
  std::vector<std::string> parts;
  const fs::path root(dir);
  std::error_code ec;
  if (const int64_t epochs = CountLines(root / "metrics.jsonl"); epochs > 0) {
    parts.push_back("metrics.jsonl with " + std::to_string(epochs) + (epochs == 1 ? " epoch" : " epochs"));
  }
  int64_t checkpoints = 0;
  for (const auto& entry : fs::directory_iterator(root / "checkpoints", ec)) {
    const std::string name = entry.path().filename().string();
    checkpoints += name.rfind("epoch-", 0) == 0 && entry.path().extension() == ".pt";  // not best.pt
  }
  if (checkpoints > 0)
    parts.push_back(std::to_string(checkpoints) + (checkpoints == 1 ? " checkpoint" : " checkpoints"));
  if (fs::exists(root / "best.pt", ec)) parts.push_back("best.pt");
  if (fs::exists(root / "model.pt", ec)) parts.push_back("model.pt");
  std::string text;
  for (size_t i = 0; i < parts.size(); ++i) text += (i ? ", " : "") + parts[i];
  return text;
}

RunDirectory::RunDirectory(const RunClaim& claim) {
  // Before anything is created in it: a directory of other files is not a run directory.
  if (RunContents(claim.dir).empty()) {
    if (const std::vector<std::string> foreign = ForeignEntries(claim.dir); !foreign.empty()) {
      std::string names;
      for (size_t i = 0; i < foreign.size() && i < 5; ++i) names += (i ? ", " : "") + foreign[i];
      if (foreign.size() > 5) names += ", ... (" + std::to_string(foreign.size()) + " in all)";
      throw ConfigError("output.dir '" + claim.dir + "' holds files that no clustertrain run wrote (" + names +
                        "); a run writes config.yaml, metrics.jsonl, model.pt, best.pt, logs/ and checkpoints/ "
                        "there, over files of those names: set output.dir to a new or empty directory");
    }
  }
  CreateDirectory(claim.dir);
  lock_fd_ = LockRunDirectory(claim.dir);
  const std::string contents = RunContents(claim.dir);
  if (contents.empty() || claim.continues) {
    std::error_code ec;
    fs::remove(fs::path(claim.dir) / "PREEMPTED", ec);  // this run takes over from the stopped one
    CreateRunFolders(claim.dir);
    return;
  }
  if (!claim.overwrite) {
    throw ConfigError("run directory '" + claim.dir + "' holds another run (" + contents +
                      "); continue it with --resume auto, set output.dir to a new directory, or pass --overwrite "
                      "to move it aside (it is renamed, never deleted)");
  }
  RefuseInputsInside(claim.dir, claim.inputs);
  // Hold the old lock until the new directory is ours, so that no other run slips in between.
  const int old_fd = lock_fd_;
  const std::string moved_to = MoveAside(claim.dir);
  CreateDirectory(claim.dir);
  lock_fd_ = LockRunDirectory(claim.dir);
  if (old_fd >= 0) close(old_fd);
  CreateRunFolders(claim.dir);
  spdlog::warn("--overwrite: moved the earlier run in {} ({}) aside to {}", claim.dir, contents, moved_to);
}

RunDirectory::~RunDirectory() {
  if (lock_fd_ >= 0) close(lock_fd_);  // releases the flock
}

}  // namespace ct
