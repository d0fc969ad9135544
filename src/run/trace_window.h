// output.trace.steps: opens the trace (util/trace.h) before the window's first global step and
// closes it before the step after its last (or at the run's end), so the validation and the
// checkpoints that fall among those steps are in it; then each rank writes
// output.dir/trace/rank-<r>.json (atomically).
//
// Clocks are aligned at the opening: every rank leaves an MPI barrier and takes that instant as
// time zero, so the ranks' timelines line up to within the barrier's skew (microseconds on one
// node, a network latency across nodes). Each file records its rank's wall-clock time at zero
// and its offset from rank 0's, which shows how far the nodes' clocks disagree.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <c10/core/Device.h>

#include "cluster/mpi_world.h"

namespace ct {

class TraceWindow {
 public:
  // `steps`: [first, last] (1-based global steps) or empty (never opens). `metadata`: JSON object
  // members about the run (buckets, backend) for every rank's file.
  // On a CUDA `device` the training thread's spans are timed by the GPU (run/device_timeline.h).
  TraceWindow(std::vector<int64_t> steps, const MpiWorld& world, c10::Device device, std::string run_dir,
              std::string metadata);
  ~TraceWindow();  // a run that failed writes no trace; recording stops
  TraceWindow(const TraceWindow&) = delete;
  TraceWindow& operator=(const TraceWindow&) = delete;

  // Before the 0-based global step `global_step`, on every rank alike (the opening is a barrier).
  void BeforeStep(int64_t global_step);
  // The run's training ended: writes the trace if the window is open (warns if it never opened).
  void Close();

 private:
  void Open(int64_t first_step);
  void Write();

  std::vector<int64_t> steps_;
  const MpiWorld& world_;
  c10::Device device_;
  std::string run_dir_;
  std::string metadata_;
  bool open_ = false;
  bool done_ = false;
  int64_t opened_at_ = 0;  // the first step traced (1-based)
  int64_t last_seen_ = 0;  // the last step begun while open (1-based)
  std::string clock_;      // the clock members of the metadata, set at the opening
};

}  // namespace ct
