#include "run/metrics_writer.h"

#include <filesystem>
#include <fstream>

#include "util/atomic_file.h"

namespace ct {
namespace {

// Keeps the first `lines` lines of a file (all of them if it has fewer), atomically.
void KeepFirstLines(const std::string& path, int64_t lines) {
  std::ifstream in(path);
  std::string kept, line;
  for (int64_t n = 0; n < lines && std::getline(in, line); ++n) kept += line + "\n";
  WriteFileAtomically(path, kept);
}

}  // namespace

MetricsWriter::MetricsWriter(const std::string& run_dir, bool enabled)
    : jsonl_path_(run_dir + "/metrics.jsonl"), csv_path_(run_dir + "/metrics.csv"), enabled_(enabled) {}

void MetricsWriter::StartFresh() {
  records_ = 0;
  if (!enabled_) return;
  std::error_code ec;
  std::filesystem::remove(jsonl_path_, ec);
  std::filesystem::remove(csv_path_, ec);
}

void MetricsWriter::Append(const EpochRecord& record) {
  ++records_;
  if (!enabled_) return;
  AppendLine(jsonl_path_, ToJson(record));
  // The header names the first record's fields (the GPU fields only on CUDA).
  if (records_ == 1) WriteFileAtomically(csv_path_, CsvHeader(record) + "\n");
  AppendLine(csv_path_, ToCsv(record));
}

void MetricsWriter::Restore(const State& state) {
  records_ = state.records;
  if (!enabled_) return;
  KeepFirstLines(jsonl_path_, state.records);
  KeepFirstLines(csv_path_, state.records + 1);  // and the header
}

}  // namespace ct
