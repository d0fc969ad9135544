// A run directory belongs to one run (DESIGN.md, "Nothing is lost").
//
// Rank 0 claims output.dir before it writes anything there: it takes an flock on
// output.dir/run.lock for the run's life (a second run into the same directory stops with the
// host and pid of the first; the kernel drops the lock when its process dies, so a stale lock
// file is no obstacle), and refuses a directory that holds another run unless the run
// continues it (--resume) or moves it aside (--overwrite: renamed to
// <dir>.replaced-YYYYMMDD-HHMMSS, never deleted).
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace ct {

struct RunClaim {
  std::string dir;
  bool continues = false;  // --resume: the run continues what the directory holds
  bool overwrite = false;  // --overwrite: move an earlier run aside
  // The run's input files with their config keys ({"data.train", path}): --overwrite refuses to
  // move a directory that holds one of them (the run would then not find its data).
  std::vector<std::pair<std::string, std::string>> inputs;
};

class RunDirectory {
 public:
  // Creates and locks claim.dir and its logs/ and checkpoints/. Throws ConfigError (exit 2) when
  // it is in use, holds another run that this one does not continue, cannot be created, or has a
  // file where one of those folders belongs.
  explicit RunDirectory(const RunClaim& claim);
  ~RunDirectory();
  RunDirectory(const RunDirectory&) = delete;
  RunDirectory& operator=(const RunDirectory&) = delete;

 private:
  int lock_fd_ = -1;
};

// output.dir with its placeholders filled in, so that the tasks of a Slurm job array (a sweep)
// each write their own run directory: {job} (SLURM_ARRAY_JOB_ID in an array, else
// SLURM_JOB_ID), {array_task} (SLURM_ARRAY_TASK_ID) and {rank_count} (the world size). Throws
// ConfigError for an unknown placeholder or one whose variable is not set.
std::string ExpandRunDirectory(const std::string& dir, int world_size);

// What of a run `dir` holds ("metrics.jsonl with 3 epochs, 2 checkpoints, model.pt"), or "" when
// it holds nothing worth keeping (missing, empty, or a run that failed before its first epoch).
std::string RunContents(const std::string& dir);

// The run stopped for preemption after writing `checkpoint`: rank 0 writes dir/PREEMPTED (the
// checkpoint's path and the time), and the file named by $CT_PREEMPTED_MARKER when that is set.
// Launchers requeue on it: mpirun exits 1, not the ranks' 75, when it was sent SIGTERM itself
// (slurm/train_step.sh, launch/mpirun.sh). A run that claims the directory removes dir/PREEMPTED.
void MarkPreempted(const std::string& dir, const std::string& checkpoint);

// The epoch records in dir/metrics.jsonl (0 when there is none).
int64_t RecordedEpochs(const std::string& dir);

}  // namespace ct
