#include "train/checkpoint.h"

#include <c10/core/GradMode.h>
#include <torch/optim/adam.h>
#include <torch/serialize/input-archive.h>
#include <torch/serialize/output-archive.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <sstream>
#include <vector>

#include "util/atomic_file.h"
#include "util/error.h"
#include "util/zip_check.h"

namespace fs = std::filesystem;

namespace ct {
namespace {

// 2: the optimizer state as WriteOptimizerState writes it (1: LibTorch's own Adam archive).
constexpr const char* kFormat = "clustertrain-checkpoint-2";
constexpr const char* kFormatWithLibTorchOptimizer = "clustertrain-checkpoint-1";

std::vector<fs::path> Checkpoints(const std::string& run_dir) {
  std::vector<fs::path> found;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(fs::path(run_dir) / "checkpoints", ec)) {
    const std::string name = entry.path().filename().string();
    // epoch-NNNNNN[.step-SSSSSS].pt; a .pt.tmp is an interrupted write and never counts.
    if (name.rfind("epoch-", 0) == 0 && entry.path().extension() == ".pt") found.push_back(entry.path());
  }
  std::sort(found.begin(), found.end());  // zero-padded epochs sort by name
  return found;
}

template <class T>
void Put(torch::serialize::OutputArchive& archive, const char* key, T value) {
  archive.write(key, c10::IValue(value));
}

c10::IValue Get(torch::serialize::InputArchive& archive, const char* key, const std::string& path) {
  c10::IValue value;
  if (!archive.try_read(key, value)) {
    throw DataError("checkpoint '" + path + "' lacks '" + key +
                    "': not a clustertrain checkpoint, or from another version");
  }
  return value;
}

// The optimizer's state per parameter, by the parameter's index in the optimizer, under the
// optimizer's key ("adam", "sgd") and names of our own (tensors and ints, which read the same in
// LibTorch 1.13 and 2.x and in Python): "step" and its StateNames() ("exp_avg", "exp_avg_sq";
// "momentum_buffer"). Nothing before the first step.
void WriteOptimizerState(torch::serialize::OutputArchive& archive, const Optimizer& optimizer) {
  torch::serialize::OutputArchive all(archive.compilation_unit());
  const size_t with_state = optimizer.Steps() > 0 ? optimizer.Params().size() : 0;
  const std::vector<std::string> names = optimizer.StateNames();
  for (size_t i = 0; i < with_state; ++i) {
    torch::serialize::OutputArchive one(archive.compilation_unit());
    one.write("step", c10::IValue(optimizer.Steps()));
    // Copies: a view would carry its whole flat buffer into the file.
    for (size_t k = 0; k < names.size(); ++k) one.write(names[k], optimizer.State(i, k).clone());
    all.write(std::to_string(i), one);
  }
  archive.write(optimizer.CheckpointKey(), all);
}

at::Tensor ReadStateTensor(torch::serialize::InputArchive& one, const std::string& key, const at::Tensor& param,
                           const std::string& path) {
  at::Tensor value;
  one.read(key, value);
  if (value.sizes() != param.sizes()) {
    throw Error("checkpoint '" + path + "': the optimizer's " + key + " has shape " + c10::str(value.sizes()) +
                " for a parameter of shape " + c10::str(param.sizes()) + "; it holds another model");
  }
  return value;
}

#if CT_LIBTORCH_MAJOR == 1
// A parameter's key in LibTorch 1.13's optimizer state map: its TensorImpl's address, printed as
// text (as c10::guts::to_string prints it).
std::string LibTorchStateKey(const at::Tensor& param) {
  std::ostringstream text;
  text << param.unsafeGetTensorImpl();
  return text.str();
}
#endif

// Format 1 (clustertrain before format 2, always LibTorch 1.13): LibTorch's own Adam archive,
// read by a LibTorch Adam over the same parameters and copied into the flat moments.
void ReadLibTorchAdamState(torch::serialize::InputArchive& archive, Optimizer& optimizer, const std::string& path) {
  if (std::string(optimizer.CheckpointKey()) != "adam") {
    throw ConfigError("checkpoint '" + path +
                      "' holds Adam's state (an older clustertrain's), but train.optimizer "
                      "is another optimizer; resume with train.optimizer=adamw or start a new run");
  }
  if (CT_LIBTORCH_MAJOR != 1) {
    throw ConfigError("checkpoint '" + path +
                      "' holds its optimizer state in LibTorch 1.x's own format, which "
                      "this build's LibTorch " CT_LIBTORCH_VERSION
                      " cannot read correctly; resume it with a "
                      "clustertrain built against LibTorch 1.13 (launch/setup.sh), whose next checkpoint any "
                      "build reads, or start a new run");
  }
#if CT_LIBTORCH_MAJOR == 1
  torch::optim::Adam libtorch_adam(optimizer.Params(), torch::optim::AdamOptions());
  torch::serialize::InputArchive optimizer_archive;
  archive.read("optimizer", optimizer_archive);
  libtorch_adam.load(optimizer_archive);
  for (size_t i = 0; i < optimizer.Params().size(); ++i) {
    const auto found = libtorch_adam.state().find(LibTorchStateKey(optimizer.Params()[i]));
    if (found == libtorch_adam.state().end()) continue;  // before the first step
    const auto& state = static_cast<const torch::optim::AdamParamState&>(*found->second);
    optimizer.SetSteps(state.step());
    optimizer.State(i, 0).copy_(state.exp_avg());
    optimizer.State(i, 1).copy_(state.exp_avg_sq());
  }
#endif
}

void ReadOptimizerState(torch::serialize::InputArchive& archive, Optimizer& optimizer, const std::string& path) {
  c10::NoGradGuard no_grad;
  if (Get(archive, "format", path).toStringRef() == kFormatWithLibTorchOptimizer) {
    ReadLibTorchAdamState(archive, optimizer, path);
    return;
  }
  torch::serialize::InputArchive all;
  if (!archive.try_read(optimizer.CheckpointKey(), all)) {
    throw ConfigError("checkpoint '" + path + "' holds no state of the optimizer '" + optimizer.CheckpointKey() +
                      "': it was trained with another train.optimizer; resume with the checkpoint's optimizer or "
                      "start a new run");
  }
  const std::vector<at::Tensor>& params = optimizer.Params();
  const std::vector<std::string> names = optimizer.StateNames();
  for (size_t i = 0; i < params.size(); ++i) {
    torch::serialize::InputArchive one;
    if (!all.try_read(std::to_string(i), one)) continue;  // saved before the first step
    c10::IValue step;
    one.read("step", step);
    optimizer.SetSteps(step.toInt());
    for (size_t k = 0; k < names.size(); ++k) {
      optimizer.State(i, k).copy_(ReadStateTensor(one, names[k], params[i], path));
    }
  }
}

// The lr schedule's state under the keys that checkpoints have always used.
void PutLrSchedule(torch::serialize::OutputArchive& archive, const LrSchedule::State& lr) {
  Put(archive, "lr", lr.lr);
  Put(archive, "plateau_lr", lr.plateau.lr);
  Put(archive, "plateau_best", lr.plateau.best);
  Put(archive, "plateau_bad_epochs", lr.plateau.bad_epochs);
  Put(archive, "plateau_cooldown", lr.plateau.cooldown_counter);
  Put(archive, "global_batch", lr.global_batch);
  Put(archive, "scaled_lr", lr.scaled_lr);
}

LrSchedule::State GetLrSchedule(torch::serialize::InputArchive& archive, const std::string& path) {
  LrSchedule::State lr;
  lr.lr = Get(archive, "lr", path).toDouble();
  lr.plateau.lr = Get(archive, "plateau_lr", path).toDouble();
  lr.plateau.best = Get(archive, "plateau_best", path).toDouble();
  lr.plateau.bad_epochs = Get(archive, "plateau_bad_epochs", path).toInt();
  lr.plateau.cooldown_counter = Get(archive, "plateau_cooldown", path).toInt();
  lr.global_batch = Get(archive, "global_batch", path).toInt();
  c10::IValue scaled_lr;  // absent before clustertrain recorded it
  lr.scaled_lr = archive.try_read("scaled_lr", scaled_lr) ? scaled_lr.toDouble() : 0.0;
  return lr;
}

// One level of a state's dotted names: "weight" is a leaf here; "encoder.0.weight" belongs to
// child "encoder" as "0.weight". Children keep their order of first appearance.
struct Level {
  std::vector<NamedTensor> leaves;
  std::vector<std::pair<std::string, std::vector<NamedTensor>>> children;
};

Level SplitLevel(const std::vector<NamedTensor>& state) {
  Level level;
  for (const NamedTensor& item : state) {
    const size_t dot = item.name.find('.');
    if (dot == std::string::npos) {
      level.leaves.push_back(item);
      continue;
    }
    const std::string head = item.name.substr(0, dot);
    auto it = std::find_if(level.children.begin(), level.children.end(),
                           [&](const auto& child) { return child.first == head; });
    if (it == level.children.end()) it = level.children.insert(it, {head, {}});
    it->second.push_back({item.name.substr(dot + 1), item.tensor, item.is_buffer});
  }
  return level;
}

// "encoder.0.weight" -> archive "encoder" -> archive "0" -> tensor "weight".
void WriteNested(torch::serialize::OutputArchive& archive, const std::vector<NamedTensor>& state) {
  const Level level = SplitLevel(state);
  // Copies, as in model.pt: a parameter may be a view of the optimizer's flat buffer.
  for (const NamedTensor& leaf : level.leaves) archive.write(leaf.name, leaf.tensor.detach().clone(), leaf.is_buffer);
  for (const auto& [name, items] : level.children) {
    torch::serialize::OutputArchive child(archive.compilation_unit());
    WriteNested(child, items);
    archive.write(name, child);
  }
}

// Reads into the tensors of `state` in place (they share their TensorImpl with the model's).
void ReadNested(torch::serialize::InputArchive& archive, const std::vector<NamedTensor>& state, const std::string& path,
                const std::string& prefix) {
  const Level level = SplitLevel(state);
  for (const NamedTensor& leaf : level.leaves) {
    // Read into a tensor of its own, then copied into the model's: try_read would make the
    // model's tensor take the read one's storage, and a parameter that is a view of a flat
    // buffer (FlatAdam) must stay one.
    at::Tensor read;
    if (!archive.try_read(leaf.name, read, leaf.is_buffer)) {
      throw Error("checkpoint '" + path + "' has no tensor '" + prefix + leaf.name + "': it holds another model");
    }
    if (read.sizes() != leaf.tensor.sizes()) {
      throw Error("checkpoint '" + path + "' holds tensor '" + prefix + leaf.name + "' with shape " +
                  c10::str(read.sizes()) + ", but the model's is " + c10::str(leaf.tensor.sizes()) +
                  ": it holds another model");
    }
    leaf.tensor.copy_(read);
  }
  for (const auto& [name, items] : level.children) {
    torch::serialize::InputArchive child;
    if (!archive.try_read(name, child)) {
      throw Error("checkpoint '" + path + "' has no module '" + prefix + name + "': it holds another model");
    }
    ReadNested(child, items, path, prefix + name + ".");
  }
}

torch::serialize::InputArchive OpenArchive(const std::string& path, const c10::Device& device) {
  torch::serialize::InputArchive archive;
  try {
    archive.load_from(path, device);
  } catch (const c10::Error& e) {
    throw DataError("cannot read checkpoint '" + path + "': " + FirstLine(e.what_without_backtrace()) +
                    "; it is truncated, damaged or not a checkpoint: resume from another one");
  }
  const std::string format = Get(archive, "format", path).toStringRef();
  if (format != kFormat && format != kFormatWithLibTorchOptimizer) {
    throw DataError("'" + path + "' is a checkpoint of another format version (" + format +
                    "); this clustertrain reads " + kFormat + " and " + kFormatWithLibTorchOptimizer);
  }
  return archive;
}

}  // namespace

std::string CheckpointPath(const std::string& run_dir, int64_t epoch, int64_t step_in_epoch) {
  char name[48];
  if (step_in_epoch > 0) {
    std::snprintf(name, sizeof(name), "epoch-%06lld.step-%06lld.pt", static_cast<long long>(epoch),
                  static_cast<long long>(step_in_epoch));
  } else {
    std::snprintf(name, sizeof(name), "epoch-%06lld.pt", static_cast<long long>(epoch));
  }
  return (fs::path(run_dir) / "checkpoints" / name).string();
}

void SaveCheckpoint(const std::string& path, Model& model, const Optimizer& optimizer, const TrainingState& s) {
  torch::serialize::OutputArchive archive;
  torch::serialize::OutputArchive model_archive(archive.compilation_unit());
  WriteNested(model_archive, model.State());
  archive.write("model", model_archive);
  WriteOptimizerState(archive, optimizer);
  Put(archive, "format", std::string(kFormat));
  Put(archive, "libtorch_version", std::string(CT_LIBTORCH_VERSION));
  Put(archive, "epoch", s.epoch);
  Put(archive, "global_step", s.global_step);
  Put(archive, "step_in_epoch", s.step_in_epoch);
  archive.write("partial_losses", s.partial_losses.defined() ? s.partial_losses.cpu() : at::zeros({0}));
  Put(archive, "world_size", s.world_size);
  PutLrSchedule(archive, s.lr);
  Put(archive, "early_best", s.early_stop.best);
  Put(archive, "early_bad_epochs", s.early_stop.bad_epochs);
  Put(archive, "best_metric", s.best.best);
  Put(archive, "best_epoch", s.best.epoch);
  Put(archive, "metrics_records", s.metrics.records);
  Put(archive, "model_fingerprint", s.model_fingerprint);
  Put(archive, "config_yaml", s.config_yaml);
  std::ostringstream bytes;
  archive.save_to(bytes);
  fs::create_directories(fs::path(path).parent_path());
  WriteFileAtomically(path, bytes.str());
}

namespace {

TrainingState ReadState(torch::serialize::InputArchive& archive, const std::string& path, Model& model,
                        const std::string& mismatch_fix) {
  TrainingState s;
  s.model_fingerprint = Get(archive, "model_fingerprint", path).toStringRef();
  // Before any tensor is read: another model's tensors would fail later with LibTorch's message.
  if (s.model_fingerprint != model.Fingerprint()) {
    throw ConfigError("checkpoint '" + path + "' holds a " + s.model_fingerprint + " model, but this one is " +
                      model.Fingerprint() + "; " + mismatch_fix);
  }
  s.epoch = Get(archive, "epoch", path).toInt();
  s.global_step = Get(archive, "global_step", path).toInt();
  s.step_in_epoch = Get(archive, "step_in_epoch", path).toInt();
  archive.read("partial_losses", s.partial_losses);
  s.world_size = Get(archive, "world_size", path).toInt();
  s.lr = GetLrSchedule(archive, path);
  s.early_stop.best = Get(archive, "early_best", path).toDouble();
  s.early_stop.bad_epochs = Get(archive, "early_bad_epochs", path).toInt();
  // Checkpoints written before best.pt existed: no best epoch yet, the next improvement is one.
  c10::IValue best_metric, best_epoch;
  if (archive.try_read("best_metric", best_metric) && archive.try_read("best_epoch", best_epoch)) {
    s.best = {best_metric.toDouble(), best_epoch.toInt()};
  } else {
    s.best = {s.early_stop.best, 0};
  }
  // Checkpoints written before the metrics writer kept its own count had one record an epoch.
  c10::IValue records;
  s.metrics.records = archive.try_read("metrics_records", records) ? records.toInt() : s.epoch;
  s.config_yaml = Get(archive, "config_yaml", path).toStringRef();
  torch::serialize::InputArchive model_archive;
  archive.read("model", model_archive);
  c10::NoGradGuard no_grad;
  ReadNested(model_archive, model.State(), path, "");
  return s;
}

}  // namespace

TrainingState LoadCheckpoint(const std::string& path, Model& model, Optimizer& optimizer, const c10::Device& device,
                             const std::string& mismatch_fix) {
  torch::serialize::InputArchive archive = OpenArchive(path, device);
  TrainingState s = ReadState(archive, path, model, mismatch_fix);
  ReadOptimizerState(archive, optimizer, path);
  return s;
}

TrainingState LoadCheckpointModel(const std::string& path, Model& model, const c10::Device& device,
                                  const std::string& mismatch_fix) {
  torch::serialize::InputArchive archive = OpenArchive(path, device);
  return ReadState(archive, path, model, mismatch_fix);
}

CheckpointSummary ReadCheckpointSummary(const std::string& path) {
  // LibTorch reads records without their CRC-32: a damaged tensor would load as wrong weights.
  if (const std::string problem = ZipIntegrityProblem(path); !problem.empty()) {
    throw DataError("checkpoint '" + path + "' is damaged: " + problem + "; resume from another one");
  }
  torch::serialize::InputArchive archive = OpenArchive(path, c10::Device(c10::kCPU));
  CheckpointSummary s;
  s.epoch = Get(archive, "epoch", path).toInt();
  s.step_in_epoch = Get(archive, "step_in_epoch", path).toInt();
  s.global_step = Get(archive, "global_step", path).toInt();
  s.config_yaml = Get(archive, "config_yaml", path).toStringRef();
  return s;
}

std::string BestCheckpointPath(const std::string& run_dir) {
  return (fs::path(run_dir) / "checkpoints" / "best.pt").string();
}

std::vector<std::string> CheckpointsIn(const std::string& run_dir) {
  std::vector<std::string> paths;
  for (const fs::path& path : Checkpoints(run_dir)) paths.push_back(path.string());
  return paths;
}

void PruneCheckpoints(const std::string& run_dir, int64_t keep) {
  auto found = Checkpoints(run_dir);
  for (size_t i = 0; i + static_cast<size_t>(keep) < found.size(); ++i) fs::remove(found[i]);
}

}  // namespace ct
