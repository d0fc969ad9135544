// Which checkpoint a run resumes from (train --resume).
#pragma once

#include <string>

namespace ct {

struct ResumePoint {
  std::string checkpoint;   // "" : start fresh
  std::string config_yaml;  // the config the checkpoint was written with
};

// resume "": start fresh. "auto": the newest checkpoint in run_dir/checkpoints that reads; a
// newer one that does not (truncated, corrupt) is skipped with a warning saying why,
// so that a Slurm requeue chain goes on from the last good one; none at all: start fresh; some
// but none readable: DataError. A path: that checkpoint, or one clear error when it is missing
// (ConfigError) or unreadable (DataError).
ResumePoint ChooseCheckpoint(const std::string& resume, const std::string& run_dir);
// (The trainer runs it on rank 0 and shares the path: every rank reading every candidate would
// multiply start-up I/O by the world size.)

// True when `resume` continues the run that run_dir holds: "auto", or a checkpoint inside
// run_dir/checkpoints.
bool ContinuesRunIn(const std::string& resume, const std::string& run_dir);

}  // namespace ct
