#include "train/resume_choice.h"

#include <filesystem>
#include <optional>

#include "run/run_directory.h"
#include "train/checkpoint.h"
#include "util/error.h"
#include "util/file_kind.h"
#include "util/logging.h"
#include "util/zip_check.h"

namespace fs = std::filesystem;

namespace ct {
namespace {

struct Candidate {
  std::string path;
  CheckpointSummary summary;
};

// The candidate's summary, or nothing (after a warning) when it is damaged or unreadable.
std::optional<Candidate> ReadCandidate(const std::string& path, std::string& skipped) {
  try {
    return Candidate{path, ReadCheckpointSummary(path)};
  } catch (const std::exception& e) {
    spdlog::warn("--resume auto: skipping {}: {}", path, ExceptionText(e));
    skipped += (skipped.empty() ? "" : ", ") + fs::path(path).filename().string();
    return std::nullopt;
  }
}

// A file torch.save wrote (a pickled object such as a state dict: archive/data.pkl and no
// TorchScript code), which LibTorch's checkpoint reader cannot take.
bool IsPickledObject(const std::string& path) {
  try {
    bool pickle = false, code = false;
    for (const ZipRecord& r : ReadZipDirectory(path)) {
      const std::string tail = r.name.substr(r.name.find('/') + 1);
      pickle |= tail == "data.pkl";
      code |= tail.rfind("code/", 0) == 0 || tail == "constants.pkl";
    }
    return pickle && !code;
  } catch (const Error&) {
    return false;  // not a ZIP archive: the checkpoint reader says what it is
  }
}

std::string EpochText(const CheckpointSummary& s) {
  return "epoch " + std::to_string(s.epoch) +
         (s.step_in_epoch > 0 ? " and " + std::to_string(s.step_in_epoch) + " steps of the next" : "");
}

ResumePoint ChooseAuto(const std::string& run_dir) {
  const std::vector<std::string> found = CheckpointsIn(run_dir);
  std::string skipped;
  std::optional<Candidate> newest;
  for (auto it = found.rbegin(); it != found.rend() && !newest; ++it) newest = ReadCandidate(*it, skipped);

  const std::string best_path = BestCheckpointPath(run_dir);
  std::optional<Candidate> best;
  if (fs::exists(best_path)) best = ReadCandidate(best_path, skipped);
  if (best && (!newest || best->summary.global_step > newest->summary.global_step)) {
    const int64_t recorded = RecordedEpochs(run_dir);
    spdlog::warn("--resume auto: resuming from {} ({}), the newest intact checkpoint ({}){}", best_path,
                 EpochText(best->summary),
                 newest ? fs::path(newest->path).filename().string() + " is older"
                        : "no epoch checkpoint is left: output.checkpoint_every=0, or they were deleted",
                 recorded > best->summary.epoch
                     ? "; epochs " + std::to_string(best->summary.epoch + 1) + "-" + std::to_string(recorded) +
                           " of metrics.jsonl are trained again and their records replaced"
                     : "");
    return {best->path, best->summary.config_yaml};
  }
  if (newest) {
    if (!skipped.empty()) spdlog::warn("--resume auto: resuming from {}, the newest that reads", newest->path);
    return {newest->path, newest->summary.config_yaml};
  }
  if (!skipped.empty()) {
    throw DataError("--resume auto: none of the checkpoints in " + run_dir + "/checkpoints can be used (" + skipped +
                    "); resume from a copy of a good one with --resume PATH, or start anew with --overwrite");
  }
  // No checkpoint at all. Starting from scratch would write over what the directory holds.
  if (const std::string contents = RunContents(run_dir); !contents.empty()) {
    throw ConfigError("--resume auto: run directory '" + run_dir + "' holds a run's results (" + contents +
                      ") but no checkpoint to resume from, so the run would start over and replace them. "
                      "If the run is finished, there is nothing to do; to train anew, pass --overwrite (the old "
                      "run is moved aside, never deleted) or set output.dir to a new directory");
  }
  return {};
}

}  // namespace

void CheckResumeTarget(const std::string& resume, const std::string& run_dir) {
  if (resume.empty() || resume == "auto") return;
  if (const std::string problem = RegularFileProblem(resume); !problem.empty()) {
    throw ConfigError("--resume " + resume + ": " + problem + "; give a checkpoint (" + run_dir +
                      "/checkpoints/epoch-NNNNNN.pt), or --resume auto for the newest in " + run_dir + "/checkpoints");
  }
  if (IsPickledObject(resume)) {
    throw ConfigError("--resume " + resume + ": " + fs::path(resume).filename().string() +
                      " holds a model's weights (a state dict, as best.pt and model.pt do), not a checkpoint with "
                      "the optimizer and schedule; resume from the best epoch's full checkpoint, " +
                      BestCheckpointPath((fs::path(resume).parent_path()).string()) +
                      ", or from the newest with --resume auto");
  }
}

ResumePoint ChooseCheckpoint(const std::string& resume, const std::string& run_dir) {
  if (resume.empty()) return {};
  if (resume == "auto") return ChooseAuto(run_dir);
  return {resume, ReadCheckpointSummary(resume).config_yaml};
}

bool ContinuesRunIn(const std::string& resume, const std::string& run_dir) {
  if (resume.empty()) return false;
  if (resume == "auto") return true;
  std::error_code ec;
  return fs::equivalent(fs::absolute(resume).parent_path(), fs::path(run_dir) / "checkpoints", ec);
}

}  // namespace ct
