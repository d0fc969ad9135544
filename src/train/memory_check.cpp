#include "train/memory_check.h"

#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "util/human_bytes.h"

namespace ct {

MemoryNeed EstimateMemoryNeed(const ModelSize& model, int64_t batch, double row_bytes, double held_bytes) {
  MemoryNeed need;
  need.row_bytes = row_bytes;
  need.batch_bytes = static_cast<double>(batch) * row_bytes;
  need.model_bytes = 4 * 4 * model.parameters;  // float32 weights, gradients and two moments
  need.activation_bytes = 4 * static_cast<double>(batch) * model.activation_floats;
  need.held_bytes = held_bytes;
  return need;
}

std::string MemoryShortfall(const MemoryNeed& need, double available, const std::string& where, int64_t batch) {
  if (need.Total() <= available) return "";
  // What to change: each part that alone exceeds what a rank has; else the batch.
  std::string fix;
  auto add = [&](const std::string& text) { fix += (fix.empty() ? "" : "; ") + text; };
  if (need.row_bytes > available) {
    add("one row (input and target) is " + HumanBytes(need.row_bytes) +
        ", so no batch fits: use shorter rows, or nodes with more " + where);
  }
  if (need.model_bytes > available) add("make the model smaller (model.hidden, model.channels, model.latent)");
  if (need.held_bytes > available / 2) add("validate on fewer rows (data.val, data.val_fraction)");
  if (fix.empty()) {
    add("lower train.batch_size (now " + std::to_string(batch) + "), make the model smaller (model.hidden, " +
        "model.channels), or run fewer ranks per node");
  }
  return "one training step needs at least " + HumanBytes(need.Total()) + " of " + where + " per rank (a batch of " +
         std::to_string(batch) + (batch == 1 ? " row " : " rows ") + HumanBytes(need.batch_bytes) +
         ", the model's parameters with their " + "gradients and Adam's moments " + HumanBytes(need.model_bytes) +
         ", layer outputs " + HumanBytes(need.activation_bytes) + ", validation rows " + HumanBytes(need.held_bytes) +
         "), but a rank has " + HumanBytes(available) + " (the smallest over ranks); " + fix;
}

double HostBytesPerRank(int local_ranks) {
  double bytes = static_cast<double>(sysconf(_SC_PHYS_PAGES)) * static_cast<double>(sysconf(_SC_PAGESIZE));
  std::ifstream meminfo("/proc/meminfo");
  for (std::string line; std::getline(meminfo, line);) {
    std::istringstream fields(line);
    std::string name;
    double kib = 0;
    if (fields >> name >> kib && name == "MemAvailable:") bytes = kib * 1024;
  }
  return bytes / std::max(local_ranks, 1);
}

}  // namespace ct
