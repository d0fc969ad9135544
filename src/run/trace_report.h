// Reading a run's traces back (run/trace_window.h writes them): `clustertrain trace merge` puts
// every rank's file into one, a process per rank; `clustertrain trace summary` reduces the spans
// to a table per phase. Only files this program wrote are read (one event per line).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace ct {

// One phase (a span's name) over the traced steps and ranks, in milliseconds.
struct PhaseStats {
  std::string name;
  int64_t count = 0;
  double mean_ms = 0, p50_ms = 0, p99_ms = 0, max_ms = 0;
  int slowest_rank = 0;  // the rank whose mean for the phase is the largest
  double slowest_rank_mean_ms = 0;
};

// output.dir/trace/merged.json (or `output`) from every rank's file; returns its path.
std::string MergeTraces(const std::string& run_dir, const std::string& output = "");

// Per phase, in the order phases first appear on rank 0. The spans of the training thread and
// the other threads' spans by name; "bucket in flight" is each all-reduce from launch to done.
std::vector<PhaseStats> SummarizeTraces(const std::string& run_dir);
std::string SummaryTable(const std::vector<PhaseStats>& phases);
std::string SummaryJson(const std::vector<PhaseStats>& phases);

}  // namespace ct
