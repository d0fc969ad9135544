// One record per epoch: metrics.jsonl (one JSON object a line) and the console line.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace ct {

struct EpochRecord {
  int64_t epoch = 0;        // 1-based
  int64_t global_step = 0;  // optimizer steps so far
  double train_loss = 0, val_loss = 0;
  // The model's metrics (model/model.h), averaged over rows: train_<name> and val_<name>.
  std::vector<std::string> metric_names;
  std::vector<double> train_metrics, val_metrics;  // one per name
  double lr = 0;                                   // lr used in the epoch's last step
  int64_t global_batch = 0;
  int world_size = 1;
  double samples_per_s = 0;  // training samples over all ranks / training seconds
  double train_seconds = 0;
  double val_seconds = 0;
  double epoch_seconds = 0;
  // The training seconds split by where the host spent them (on CUDA, kernel launches are
  // asynchronous: time shows up where the host waits, usually in comm).
  double data_seconds = 0;     // building batches
  double compute_seconds = 0;  // forward, backward, optimizer
  double comm_seconds = 0;     // waiting for the gradient all-reduce after backward
  int64_t skipped_steps = 0;   // steps skipped for a non-finite loss (train.on_nonfinite=skip)
  double max_rss_mb = 0;       // largest resident memory of any rank at the epoch's end
  int64_t best_epoch = 0;      // the epoch best.pt holds (best train.monitor by the plateau's test)
  // On CUDA only (absent from the record elsewhere): the largest peak of any rank's GPU memory
  // in LibTorch's caching allocator over the epoch, and the GPUs' mean utilisation (NVML).
  std::optional<double> gpu_mem_allocated_mb, gpu_mem_reserved_mb, gpu_util_percent;
};

// (name, JSON value) in a fixed order: the one definition of the record's fields (train_loss,
// train_<metric>..., val_loss, val_<metric>..., the run's numbers, the optional GPU fields last,
// where present).
std::vector<std::pair<std::string, std::string>> RecordFields(const EpochRecord& record);

// Throws ConfigError when a model's metric names cannot be recorded: a name that is not
// [A-Za-z0-9_]+, twice, "loss", or whose train_/val_ column is one of the record's own fields.
void CheckMetricNames(const std::vector<std::string>& names, const std::string& model);

// What train.monitor names: "val/loss", "train/loss", "val/<metric>" or "train/<metric>".
struct Monitor {
  bool validation = true;
  int metric = -1;  // index into metric_names; -1: the loss
  std::string name = "val/loss";
  std::string Label() const;  // for messages: "val loss"
};
// Throws ConfigError naming what can be monitored when `spec` names nothing the model records.
Monitor ParseMonitor(const std::string& spec, const std::vector<std::string>& metric_names);
double MonitoredValue(const EpochRecord& record, const Monitor& monitor);

// {"epoch":1,...} without a trailing newline; NaN and infinities become null.
std::string ToJson(const EpochRecord& record);

// "epoch   3/10  train 0.07120 (mse 0.0690 kl 2.18)  val 0.06980 (mse 0.0672 kl 2.09)  lr 2.00e-03  4121
// samples/s  4.0 s": every metric, by name.
std::string ConsoleLine(const EpochRecord& record, int64_t epochs);

// Appends one line and flushes it (rank 0).
void AppendLine(const std::string& path, const std::string& line);

// metrics.csv for spreadsheets: the header line (the fields `record` has), and one record as a
// line (null -> empty).
std::string CsvHeader(const EpochRecord& record);
std::string ToCsv(const EpochRecord& record);

}  // namespace ct
