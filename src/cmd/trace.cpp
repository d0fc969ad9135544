// clustertrain trace merge|summary RUN_DIR: a run's timeline trace (output.trace.steps) read back
// (src/run/trace_report.h). No MPI.
#include <iostream>
#include <memory>

#include "cmd/command.h"
#include "run/trace_report.h"
#include "util/error.h"

namespace ct {
namespace {

struct TraceOptions {
  std::string run_dir;
  std::string output;
  bool json = false;
};

int Reported(const std::function<void()>& body) {
  try {
    body();
    return kExitOk;
  } catch (const Error& e) {
    return ReportEarlyError(e.what(), e.ExitCode());
  }
}

}  // namespace

Command AddTraceCommand(CLI::App& app) {
  auto o = std::make_shared<TraceOptions>();
  CLI::App* cli = app.add_subcommand(
      "trace",
      "read a run's timeline trace (train with output.trace.steps=[first, last]): output.dir/trace/rank-<r>.json "
      "holds each rank's spans in Chrome trace-event JSON (open it in https://ui.perfetto.dev)");
  cli->require_subcommand(1);
  CLI::App* merge = cli->add_subcommand(
      "merge", "write every rank's trace into one file, a process per rank (default output.dir/trace/merged.json)");
  merge->add_option("run_dir", o->run_dir, "the run directory (output.dir)")->required()->check(CLI::ExistingDirectory);
  merge->add_option("-o,--output", o->output, "the merged file's path");
  CLI::App* summary = cli->add_subcommand(
      "summary",
      "per phase (step, batch, forward, backward, gradient wait, optimizer, validation, bucket in flight, ...): "
      "spans, mean, p50, p99 and max in ms over the traced steps and ranks, and the slowest rank's mean");
  summary->add_option("run_dir", o->run_dir, "the run directory (output.dir)")
      ->required()
      ->check(CLI::ExistingDirectory);
  summary->add_flag("--json", o->json, "print the table as JSON (one object per phase)");
  return {cli, [o, merge](int, char**) -> int {
            return Reported([&] {
              if (*merge) {
                std::cout << MergeTraces(o->run_dir, o->output) << "\n";
              } else {
                const std::vector<PhaseStats> phases = SummarizeTraces(o->run_dir);
                std::cout << (o->json ? SummaryJson(phases) : SummaryTable(phases));
              }
            });
          }};
}

}  // namespace ct
