// The run's metrics files, written by rank 0: metrics.jsonl (one JSON object per epoch) and
// metrics.csv (a header, then one line per epoch), each line flushed as it is written.
#pragma once

#include <cstdint>
#include <string>

#include "run/metrics.h"

namespace ct {

class MetricsWriter {
 public:
  // `enabled`: this rank writes (rank 0); on the others every call does nothing.
  MetricsWriter(const std::string& run_dir, bool enabled);

  // A new run: no records (the CSV header comes with the first).
  void StartFresh();
  void Append(const EpochRecord& record);

  // Checkpointed: how many records the run had written.
  struct State {
    int64_t records = 0;
  };
  State Snapshot() const { return {records_}; }
  // Resuming: keeps the first `records` records of each file, dropping those of epochs the
  // checkpoint does not know (written after it by the run that stopped).
  void Restore(const State& state);

 private:
  std::string jsonl_path_;
  std::string csv_path_;
  bool enabled_;
  int64_t records_ = 0;
};

}  // namespace ct
