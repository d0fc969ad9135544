#include "train/resume_choice.h"

#include <filesystem>

#include "train/checkpoint.h"
#include "util/error.h"
#include "util/logging.h"

namespace fs = std::filesystem;

namespace ct {

ResumePoint ChooseCheckpoint(const std::string& resume, const std::string& run_dir) {
  if (resume.empty()) return {};
  if (resume != "auto") {
    if (!fs::is_regular_file(resume)) {
      throw ConfigError("--resume " + resume + ": no such checkpoint; use --resume auto for the newest in " + run_dir +
                        "/checkpoints");
    }
    return {resume, CheckpointConfigYaml(resume)};
  }
  const std::vector<std::string> found = CheckpointsIn(run_dir);
  std::string skipped;
  for (auto it = found.rbegin(); it != found.rend(); ++it) {
    try {
      ResumePoint point{*it, CheckpointConfigYaml(*it)};
      if (!skipped.empty()) spdlog::warn("--resume auto: resuming from {}, the newest that reads", *it);
      return point;
    } catch (const std::exception& e) {
      spdlog::warn("--resume auto: skipping {}: {}", *it, ExceptionText(e));
      skipped += (skipped.empty() ? "" : ", ") + fs::path(*it).filename().string();
    }
  }
  if (!found.empty()) {
    throw DataError("--resume auto: none of the checkpoints in " + run_dir + "/checkpoints reads (" + skipped +
                    "); resume from a copy of a good one with --resume PATH, or start anew with --overwrite");
  }
  return {};
}

bool ContinuesRunIn(const std::string& resume, const std::string& run_dir) {
  if (resume.empty()) return false;
  if (resume == "auto") return true;
  std::error_code ec;
  return fs::equivalent(fs::absolute(resume).parent_path(), fs::path(run_dir) / "checkpoints", ec);
}

}  // namespace ct
