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

std::string ToJson(const EpochRecord& r) {
  std::string out = "{";
  auto field = [&](const char* name, const std::string& value) {
    out += (out.size() > 1 ? "," : "") + std::string("\"") + name + "\":" + value;
  };
  field("epoch", std::to_string(r.epoch));
  field("global_step", std::to_string(r.global_step));
  field("train_loss", Number(r.train_loss));
  field("train_mse", Number(r.train_mse));
  field("train_kl", Number(r.train_kl));
  field("val_loss", Number(r.val_loss));
  field("val_mse", Number(r.val_mse));
  field("val_kl", Number(r.val_kl));
  field("lr", Number(r.lr));
  field("global_batch", std::to_string(r.global_batch));
  field("world_size", std::to_string(r.world_size));
  field("samples_per_s", Number(r.samples_per_s));
  field("train_seconds", Number(r.train_seconds));
  field("val_seconds", Number(r.val_seconds));
  field("epoch_seconds", Number(r.epoch_seconds));
  return out + "}";
}

std::string ConsoleLine(const EpochRecord& r, int64_t epochs) {
  char text[256];
  std::snprintf(text, sizeof(text),
                "epoch %3lld/%lld  train %.5f (mse %.5f kl %.3f)  val %.5f (mse %.5f kl %.3f)  lr %.2e  "
                "%.0f samples/s  %.1f s",
                static_cast<long long>(r.epoch), static_cast<long long>(epochs), r.train_loss, r.train_mse,
                r.train_kl, r.val_loss, r.val_mse, r.val_kl, r.lr, r.samples_per_s, r.epoch_seconds);
  return text;
}

void AppendLine(const std::string& path, const std::string& line) {
  std::ofstream out(path, std::ios::app);
  out << line << '\n';
  out.flush();
  if (!out) throw Error("cannot append to '" + path + "' (disk full or not writable?)");
}

}  // namespace ct
