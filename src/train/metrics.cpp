#include "train/metrics.h"

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
      {"train_loss", Number(r.train_loss)},
      {"train_mse", Number(r.train_mse)},
      {"train_kl", Number(r.train_kl)},
      {"val_loss", Number(r.val_loss)},
      {"val_mse", Number(r.val_mse)},
      {"val_kl", Number(r.val_kl)},
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

std::string ConsoleLine(const EpochRecord& r, int64_t epochs) {
  char text[256];
  std::snprintf(text, sizeof(text),
                "epoch %3lld/%lld  train %.5f (mse %.5f kl %.3f)  val %.5f (mse %.5f kl %.3f)  lr %.2e  "
                "%.0f samples/s  %.1f s",
                static_cast<long long>(r.epoch), static_cast<long long>(epochs), r.train_loss, r.train_mse, r.train_kl,
                r.val_loss, r.val_mse, r.val_kl, r.lr, r.samples_per_s, r.epoch_seconds);
  return text;
}

void AppendLine(const std::string& path, const std::string& line) {
  std::ofstream out(path, std::ios::app);
  out << line << '\n';
  out.flush();
  if (!out) throw Error("cannot append to '" + path + "' (disk full or not writable?)");
}

}  // namespace ct
