#include "run/trace_window.h"

#include <fmt/format.h>

#include <chrono>
#include <filesystem>
#include <system_error>

#include "cluster/mpi_check.h"
#include "run/device_timeline.h"
#include "util/atomic_file.h"
#include "util/logging.h"
#include "util/trace.h"

namespace ct {
namespace {

int64_t WallMicroseconds() {
  return std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace

TraceWindow::TraceWindow(std::vector<int64_t> steps, const MpiWorld& world, c10::Device device, std::string run_dir,
                         std::string metadata)
    : steps_(std::move(steps)),
      world_(world),
      device_(device),
      run_dir_(std::move(run_dir)),
      metadata_(std::move(metadata)) {
  trace::NameThisThread("training");
}

TraceWindow::~TraceWindow() {
  if (open_) trace::Stop();
}

void TraceWindow::BeforeStep(int64_t global_step) {
  if (steps_.empty() || done_) return;
  const int64_t step = global_step + 1;
  if (!open_ && step >= steps_[0] && step <= steps_[1]) Open(step);  // a resumed run may start inside
  if (open_ && step > steps_[1]) Close();
  if (open_) last_seen_ = step;
}

void TraceWindow::Open(int64_t first_step) {
  // The same global step on every rank: all of them come here together.
  MPI_CHECK(MPI_Barrier(world_.Comm()));
  const trace::Clock::time_point zero = trace::Clock::now();
  int64_t wall = WallMicroseconds();
  int64_t rank0_wall = wall;
  MPI_CHECK(MPI_Bcast(&rank0_wall, 1, MPI_INT64_T, 0, world_.Comm()));
  clock_ =
      fmt::format(R"("clock":{{"zero":"the end of an MPI barrier before global step {}","wall_clock_at_zero_us":{},)"
                  R"("wall_clock_offset_from_rank0_us":{}}})",
                  first_step, wall, wall - rank0_wall);
  opened_at_ = first_step;
  open_ = true;
  trace::Start(zero, MakeDeviceTimeline(device_));  // the training thread's spans timed by a GPU
}

void TraceWindow::Close() {
  if (!open_) {
    if (!steps_.empty() && !done_ && world_.Rank() == 0) {
      spdlog::warn("output.trace.steps=[{}, {}]: no step of the window ran in this run, so no trace was written",
                   steps_[0], steps_[1]);
    }
    return;
  }
  open_ = false;
  done_ = true;
  Write();
}

// Each rank its own file. A failure to write is a warning: a trace is not worth a run.
void TraceWindow::Write() {
  const trace::Recording recording = trace::Stop();
  const std::string dir = run_dir_ + "/trace";
  const std::string path = dir + "/rank-" + std::to_string(world_.Rank()) + ".json";
  const std::string device_clock = recording.device_clock.empty() ? "the host's steady clock" : recording.device_clock;
  const std::string metadata = fmt::format(
      R"("rank":{},"world_size":{},"host":{},"steps":[{},{}],"traced_steps":[{},{}],{},"training_thread_clock":{}{}{})",
      world_.Rank(), world_.Size(), trace::JsonQuoted(world_.Host()), steps_[0], steps_[1], opened_at_, last_seen_,
      clock_, trace::JsonQuoted(device_clock), metadata_.empty() ? "" : ",", metadata_);
  try {
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    WriteFileAtomically(path, trace::ToJson(recording, world_.Rank(), metadata));
  } catch (const std::exception& e) {
    spdlog::warn("rank {}: the trace was not written: {}", world_.Rank(), e.what());
    return;
  }
  if (world_.Rank() == 0) {
    spdlog::info("trace of global steps {}-{}: {}/rank-<r>.json ({} events on rank 0); clustertrain trace summary {}",
                 opened_at_, last_seen_, dir, recording.events.size(), run_dir_);
  }
}

}  // namespace ct
