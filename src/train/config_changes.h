// Resuming with other settings than the checkpoint's (train --resume).
//
// A resumed run on CPU with the same world size continues the uninterrupted run bit for bit
// (checkpoint.h). Settings that only say how long to train, where to write or how to run
// (train.epochs, output.*, runtime.* but the all-reduce precision, data.prefetch, ...) may
// change freely; the others (data, batch, lr schedule, seed, model, precision) change what is
// trained, so changing them is refused unless the user allows it.
#pragma once

#include <string>
#include <vector>

#include "util/config.h"

namespace ct {

struct ConfigChange {
  std::string key, before, after;
  bool breaks_exactness = false;
};

// The keys whose values differ between the checkpoint's config (its YAML) and `now`. Paths that
// name the same file count as equal.
std::vector<ConfigChange> ConfigChanges(const std::string& checkpoint_yaml, const Config& now);

// Warns about each change; a change that breaks exactness is a ConfigError listing them all
// unless `allowed` (--allow-config-changes).
void CheckConfigChanges(const std::string& checkpoint, const std::string& checkpoint_yaml, const Config& now,
                        bool allowed);

}  // namespace ct
