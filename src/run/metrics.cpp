#include "run/metrics.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <fstream>

#include "util/error.h"

namespace ct {
namespace {

std::string Number(double value) {
  if (!std::isfinite(value)) return "null";
  char text[32];
  std::snprintf(text, sizeof(text), "%.9g", value);
  return text;
}

}  // namespace

std::vector<std::pair<std::string, std::string>> RecordFields(const EpochRecord& r) {
  std::vector<std::pair<std::string, std::string>> fields = {
      {"epoch", std::to_string(r.epoch)},
      {"global_step", std::to_string(r.global_step)},
  };
  fields.emplace_back("train_loss", Number(r.train_loss));
  for (size_t i = 0; i < r.metric_names.size(); ++i) {
    fields.emplace_back("train_" + r.metric_names[i], Number(r.train_metrics[i]));
  }
  fields.emplace_back("val_loss", Number(r.val_loss));
  for (size_t i = 0; i < r.metric_names.size(); ++i) {
    fields.emplace_back("val_" + r.metric_names[i], Number(r.val_metrics[i]));
  }
  const std::vector<std::pair<std::string, std::string>> rest = {
      {"lr", Number(r.lr)},
      {"global_batch", std::to_string(r.global_batch)},
      {"world_size", std::to_string(r.world_size)},
      {"samples_per_s", Number(r.samples_per_s)},
      {"train_seconds", Number(r.train_seconds)},
      {"val_seconds", Number(r.val_seconds)},
      {"epoch_seconds", Number(r.epoch_seconds)},
      {"data_seconds", Number(r.data_seconds)},
      {"compute_seconds", Number(r.compute_seconds)},
      {"comm_seconds", Number(r.comm_seconds)},
      {"skipped_steps", std::to_string(r.skipped_steps)},
      {"max_rss_mb", Number(r.max_rss_mb)},
      {"best_epoch", std::to_string(r.best_epoch)},
  };
  fields.insert(fields.end(), rest.begin(), rest.end());
  if (r.gpu_mem_allocated_mb) fields.emplace_back("gpu_mem_allocated_mb", Number(*r.gpu_mem_allocated_mb));
  if (r.gpu_mem_reserved_mb) fields.emplace_back("gpu_mem_reserved_mb", Number(*r.gpu_mem_reserved_mb));
  if (r.gpu_util_percent) fields.emplace_back("gpu_util_percent", Number(*r.gpu_util_percent));
  return fields;
}

std::string ToJson(const EpochRecord& r) {
  std::string out = "{";
  for (const auto& [name, value] : RecordFields(r)) out += (out.size() > 1 ? ",\"" : "\"") + name + "\":" + value;
  return out + "}";
}

std::string CsvHeader(const EpochRecord& record) {
  std::string out;
  for (const auto& field : RecordFields(record)) out += (out.empty() ? "" : ",") + field.first;
  return out;
}

std::string ToCsv(const EpochRecord& r) {
  std::string out;
  bool first = true;
  for (const auto& field : RecordFields(r)) {
    out += (first ? "" : ",") + (field.second == "null" ? std::string() : field.second);
    first = false;
  }
  return out;
}

namespace {

// "0.07120 (mse 0.0690 kl 2.18)": a loss and its metrics, 4 significant digits each.
std::string LossAndMetrics(double loss, const std::vector<std::string>& names, const std::vector<double>& values) {
  char number[32];
  std::snprintf(number, sizeof(number), "%.5f", loss);
  std::string text = number;
  for (size_t i = 0; i < names.size(); ++i) {
    std::snprintf(number, sizeof(number), "%.4g", values[i]);
    text += (i == 0 ? " (" : " ") + names[i] + " " + number;
  }
  return names.empty() ? text : text + ")";
}

}  // namespace

std::string ConsoleLine(const EpochRecord& r, int64_t epochs) {
  char text[128];
  std::snprintf(text, sizeof(text), "epoch %3lld/%lld  train ", static_cast<long long>(r.epoch),
                static_cast<long long>(epochs));
  std::string line = text + LossAndMetrics(r.train_loss, r.metric_names, r.train_metrics) + "  val " +
                     LossAndMetrics(r.val_loss, r.metric_names, r.val_metrics);
  std::snprintf(text, sizeof(text), "  lr %.2e  %.0f samples/s  %.1f s", r.lr, r.samples_per_s, r.epoch_seconds);
  return line + text;
}

void CheckMetricNames(const std::vector<std::string>& names, const std::string& model) {
  const std::vector<std::pair<std::string, std::string>> own = RecordFields(EpochRecord{});
  for (size_t i = 0; i < names.size(); ++i) {
    const std::string& name = names[i];
    const std::string where = model + " returns a metric '" + name + "'";
    const bool word = !name.empty() && std::all_of(name.begin(), name.end(), [](char c) {
      return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
    });
    if (!word) {
      throw ConfigError(where +
                        ": metric names are recorded as columns train_<name> and val_<name>, so they "
                        "take letters, digits and _ only; rename it");
    }
    if (name == "loss") throw ConfigError(where + " besides its loss: 'loss' is the loss itself; rename the metric");
    for (size_t j = 0; j < i; ++j) {
      if (names[j] == name) throw ConfigError(where + " twice; give each metric its own name");
    }
    for (const std::string& column : {"train_" + name, "val_" + name}) {
      const bool taken = std::any_of(own.begin(), own.end(), [&](const auto& f) { return f.first == column; });
      const size_t seconds = column.rfind("_seconds");
      if (taken || (seconds != std::string::npos && seconds + 8 == column.size())) {
        throw ConfigError(where + ": its column '" + column +
                          "' collides with a field metrics.jsonl records for every run (or its timing fields' "
                          "*_seconds); rename the metric");
      }
    }
  }
}

Monitor ParseMonitor(const std::string& spec, const std::vector<std::string>& metric_names) {
  Monitor monitor;
  monitor.name = spec;
  const size_t slash = spec.find('/');
  const std::string split = spec.substr(0, slash == std::string::npos ? 0 : slash);
  const std::string name = slash == std::string::npos ? spec : spec.substr(slash + 1);
  bool found = (split == "val" || split == "train") && name == "loss";
  for (size_t i = 0; i < metric_names.size() && !found; ++i) {
    if ((split == "val" || split == "train") && metric_names[i] == name) {
      found = true;
      monitor.metric = static_cast<int>(i);
    }
  }
  if (!found) {
    std::string choices = "val/loss, train/loss";
    for (const std::string& m : metric_names) choices += ", val/" + m + ", train/" + m;
    throw ConfigError("config key 'train.monitor' is '" + spec + "', which names nothing the model records; choose " +
                      "one of " + choices + " (with train.plateau.mode min or max)");
  }
  monitor.validation = split == "val";
  return monitor;
}

std::string Monitor::Label() const {
  std::string label = name;
  std::replace(label.begin(), label.end(), '/', ' ');
  return label;
}

double MonitoredValue(const EpochRecord& r, const Monitor& monitor) {
  if (monitor.metric < 0) return monitor.validation ? r.val_loss : r.train_loss;
  const auto i = static_cast<size_t>(monitor.metric);
  return monitor.validation ? r.val_metrics[i] : r.train_metrics[i];
}

void AppendLine(const std::string& path, const std::string& line) {
  std::ofstream out(path, std::ios::app);
  out << line << '\n';
  out.flush();
  if (!out) throw Error("cannot append to '" + path + "' (disk full or not writable?)");
}

}  // namespace ct
