// Which checkpoint a run resumes from (train --resume).
#pragma once

#include <string>

namespace ct {

struct ResumePoint {
  std::string checkpoint;   // "" : start fresh
  std::string config_yaml;  // the config the checkpoint was written with
};

// Before the run directory is claimed: a --resume PATH that cannot be a checkpoint at all is one
// clear ConfigError (a path that is not a regular file, or a model's weights such as best.pt or
// model.pt, with the checkpoint to use instead). "" and "auto" pass.
void CheckResumeTarget(const std::string& resume, const std::string& run_dir);

// resume "": start fresh. "auto": the newest intact checkpoint of the run in run_dir, by its
// global step: checkpoints/epoch-*.pt, or checkpoints/best.pt where it is newer than every
// intact epoch checkpoint (output.checkpoint_every=0, or epoch checkpoints deleted), saying so.
// A damaged candidate (truncated, a CRC-32 that no longer matches) is skipped with a warning
// saying why, so that a Slurm requeue chain goes on from the last good one. No checkpoint at
// all: start fresh, but only in a directory without results (metrics, best.pt, model.pt);
// with results, ConfigError (exit 2): starting over would replace them. Candidates, none
// intact: DataError. A path: that checkpoint, or one clear error when it is unreadable
// (DataError).
ResumePoint ChooseCheckpoint(const std::string& resume, const std::string& run_dir);
// (The trainer runs it on rank 0 and shares the path: every rank reading every candidate would
// multiply start-up I/O by the world size.)

// True when `resume` continues the run that run_dir holds: "auto", or a checkpoint inside
// run_dir/checkpoints.
bool ContinuesRunIn(const std::string& resume, const std::string& run_dir);

}  // namespace ct
