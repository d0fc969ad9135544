#include "train/config_changes.h"

#include <filesystem>
#include <map>

#include "util/error.h"
#include "util/logging.h"

namespace ct {
namespace {

// Keys a resumed run may change without changing what it trains.
bool KeepsExactness(const std::string& key) {
  static const char* const kFree[] = {
      "train.epochs",  "train.device",   "train.nan_check_every", "train.on_nonfinite", "train.early_stop_patience",
      "data.prefetch", "data.mpi_hints", "data.memory_budget"};
  for (const char* free : kFree) {
    if (key == free) return true;
  }
  if (key == "runtime.allreduce_precision") return false;
  // train.autotune.*: a resume keeps the batch the search chose and never searches again.
  return key.rfind("output.", 0) == 0 || key.rfind("runtime.", 0) == 0 || key.rfind("train.autotune.", 0) == 0;
}

bool IsPathKey(const std::string& key) { return key == "data.train" || key == "data.val" || key == "model.path"; }

bool SameFile(const std::string& a, const std::string& b) {
  std::error_code ec;
  return std::filesystem::equivalent(a, b, ec);
}

}  // namespace

std::vector<ConfigChange> ConfigChanges(const std::string& checkpoint_yaml, const Config& now) {
  // Through a Config, so that keys added since the checkpoint compare as their defaults.
  const Config before_config = LoadConfigText(checkpoint_yaml, "the checkpoint's config", {});
  std::map<std::string, std::string> before;
  for (auto& [key, value] : ConfigValues(before_config)) before[key] = value;
  std::vector<ConfigChange> changes;
  for (const auto& [key, value] : ConfigValues(now)) {
    const std::string& old = before[key];
    if (old == value || (IsPathKey(key) && SameFile(old, value))) continue;
    if (key == "output.dir") continue;  // resuming another directory's checkpoint here: not news
    changes.push_back({key, old, value, !KeepsExactness(key)});
  }
  return changes;
}

void CheckConfigChanges(const std::string& checkpoint, const std::string& checkpoint_yaml, const Config& now,
                        bool allowed) {
  std::string breaking;
  for (const ConfigChange& change : ConfigChanges(checkpoint_yaml, now)) {
    if (!change.breaks_exactness) {
      spdlog::info("resuming with {} = {} (the checkpoint's run had {})", change.key, change.after, change.before);
      continue;
    }
    spdlog::warn(
        "resuming with {} = {} (the checkpoint's run had {}): the resumed run no longer continues the "
        "original exactly",
        change.key, change.after, change.before);
    breaking += (breaking.empty() ? "" : ", ") + change.key;
  }
  if (breaking.empty() || allowed) return;
  throw ConfigError("resuming " + checkpoint + " with other settings than it was trained with (" + breaking +
                    "): the run would no longer continue the original. Resume with the checkpoint's settings "
                    "(its config.yaml), start a new output.dir, or pass --allow-config-changes to continue with "
                    "the new ones");
}

}  // namespace ct
