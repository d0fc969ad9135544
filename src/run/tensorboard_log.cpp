#include "run/tensorboard_log.h"

#include <cstdlib>
#include <limits>

namespace ct {

Scalars EpochScalars(const EpochRecord& record) {
  Scalars scalars;
  for (const auto& [name, json] : RecordFields(record)) {
    if (name == "global_step") continue;
    const size_t seconds = name.rfind("_seconds");
    std::string tag = name;
    if (seconds != std::string::npos && seconds + 8 == name.size()) {
      tag = "time/" + name.substr(0, seconds);  // train_seconds -> time/train
    } else if (name.rfind("train_", 0) == 0 || name.rfind("val_", 0) == 0) {
      tag[tag.find('_')] = '/';  // val_loss -> val/loss
    }
    const float value = json == "null" ? std::numeric_limits<float>::quiet_NaN()
                                       : static_cast<float>(std::strtod(json.c_str(), nullptr));
    scalars.emplace_back(tag, value);
  }
  return scalars;
}

TensorBoardLog::TensorBoardLog(const std::string& run_dir, int64_t global_step)
    : file_(run_dir + "/tensorboard", global_step + 1) {}

void TensorBoardLog::WriteEpoch(const EpochRecord& record, const at::Tensor& step_losses, int64_t log_every) {
  const int64_t steps = step_losses.size(0);
  const int64_t columns = step_losses.size(1);
  const float* losses = step_losses.data_ptr<float>();
  if (log_every > 0) {
    for (int64_t i = log_every - 1; i < steps; i += log_every) {
      file_.WriteScalars(record.global_step - steps + 1 + i, {{"train/loss_step", losses[i * columns]}});
    }
  }
  file_.WriteScalars(record.global_step, EpochScalars(record));
}

}  // namespace ct
