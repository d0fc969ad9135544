#include "train/checkpoint.h"

#include <c10/core/GradMode.h>
#include <torch/optim/adam.h>
#include <torch/serialize/input-archive.h>
#include <torch/serialize/output-archive.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <sstream>
#include <type_traits>
#include <variant>
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

// Every scalar of a TrainingState in a checkpoint: its key and its place, written and read
// from this one table (in this order). `absent` is what a checkpoint written before the key
// existed stands for (it may use keys read before it); nullptr: the key is required.
using Slot = std::variant<int64_t*, double*, std::string*>;
struct StateKey {
  const char* key;
  Slot (*slot)(TrainingState& s);
  void (*absent)(TrainingState& s);
};

// clang-format off
const StateKey kStateKeys[] = {
    {"epoch",              [](TrainingState& s) -> Slot { return &s.epoch; }, nullptr},
    {"global_step",        [](TrainingState& s) -> Slot { return &s.global_step; }, nullptr},
    {"step_in_epoch",      [](TrainingState& s) -> Slot { return &s.step_in_epoch; }, nullptr},
    {"world_size",         [](TrainingState& s) -> Slot { return &s.world_size; }, nullptr},
    {"lr",                 [](TrainingState& s) -> Slot { return &s.lr.lr; }, nullptr},
    {"plateau_lr",         [](TrainingState& s) -> Slot { return &s.lr.plateau.lr; }, nullptr},
    {"plateau_best",       [](TrainingState& s) -> Slot { return &s.lr.plateau.best; }, nullptr},
    {"plateau_bad_epochs", [](TrainingState& s) -> Slot { return &s.lr.plateau.bad_epochs; }, nullptr},
    {"plateau_cooldown",   [](TrainingState& s) -> Slot { return &s.lr.plateau.cooldown_counter; }, nullptr},
    {"global_batch",       [](TrainingState& s) -> Slot { return &s.lr.global_batch; }, nullptr},
    {"scaled_lr",          [](TrainingState& s) -> Slot { return &s.lr.scaled_lr; },
                           [](TrainingState& s) { s.lr.scaled_lr = 0; }},  // 0: the lr rule's own
    {"early_best",         [](TrainingState& s) -> Slot { return &s.early_stop.best; }, nullptr},
    {"early_bad_epochs",   [](TrainingState& s) -> Slot { return &s.early_stop.bad_epochs; }, nullptr},
    // Before best.pt existed: no best epoch yet, the next improvement is one.
    {"best_metric",        [](TrainingState& s) -> Slot { return &s.best.best; },
                           [](TrainingState& s) { s.best.best = s.early_stop.best; }},
    {"best_epoch",         [](TrainingState& s) -> Slot { return &s.best.epoch; },
                           [](TrainingState& s) { s.best.epoch = 0; }},
    // Before the metrics writer kept its own count: one record an epoch.
    {"metrics_records",    [](TrainingState& s) -> Slot { return &s.metrics.records; },
                           [](TrainingState& s) { s.metrics.records = s.epoch; }},
    {"model_fingerprint",  [](TrainingState& s) -> Slot { return &s.model_fingerprint; }, nullptr},
    {"config_yaml",        [](TrainingState& s) -> Slot { return &s.config_yaml; }, nullptr},
};
// clang-format on

void WriteScalars(torch::serialize::OutputArchive& archive, TrainingState s) {  // a copy: slots are non-const
  for (const StateKey& k : kStateKeys) {
    std::visit([&](auto* field) { Put(archive, k.key, *field); }, k.slot(s));
  }
}

TrainingState ReadScalars(torch::serialize::InputArchive& archive, const std::string& path) {
  TrainingState s;
  for (const StateKey& k : kStateKeys) {
    c10::IValue value;
    if (k.absent != nullptr && !archive.try_read(k.key, value)) {
      k.absent(s);
      continue;
    }
    if (k.absent == nullptr) value = Get(archive, k.key, path);
    std::visit(
        [&](auto* field) {
          using T = std::remove_pointer_t<decltype(field)>;
          if constexpr (std::is_same_v<T, int64_t>) *field = value.toInt();
          if constexpr (std::is_same_v<T, double>) *field = value.toDouble();
          if constexpr (std::is_same_v<T, std::string>) *field = value.toStringRef();
        },
        k.slot(s));
  }
  return s;
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

at::Tensor ResumedStepLosses(const TrainingState& s, const std::string& path, int rank, int world_size, int64_t steps,
                             int64_t columns) {
  const at::Tensor losses = s.world_size == world_size ? s.partial_losses[rank] : s.partial_losses.mean(0);
  if (losses.size(1) != columns) {
    throw ConfigError("checkpoint '" + path + "' stopped inside an epoch with " + std::to_string(losses.size(1) - 1) +
                      " metrics per step, but the model records " + std::to_string(columns - 1) +
                      "; resume with the same model, or from an epoch-boundary checkpoint (epoch-NNNNNN.pt)");
  }
  if (losses.size(0) != steps) {
    throw ConfigError("checkpoint '" + path + "' stopped inside an epoch of " + std::to_string(losses.size(0)) +
                      " steps, but this run has " + std::to_string(steps) +
                      " steps per epoch; resume with the same data, batch size and world "
                      "size, or from an epoch-boundary checkpoint (epoch-NNNNNN.pt)");
  }
  return losses;
}

void SaveCheckpoint(const std::string& path, Model& model, const Optimizer& optimizer, const TrainingState& s) {
  torch::serialize::OutputArchive archive;
  torch::serialize::OutputArchive model_archive(archive.compilation_unit());
  WriteNested(model_archive, model.State());
  archive.write("model", model_archive);
  WriteOptimizerState(archive, optimizer);
  Put(archive, "format", std::string(kFormat));
  Put(archive, "libtorch_version", std::string(CT_LIBTORCH_VERSION));
  WriteScalars(archive, s);
  archive.write("partial_losses", s.partial_losses.defined() ? s.partial_losses.cpu() : at::zeros({0}));
  std::ostringstream bytes;
  archive.save_to(bytes);
  fs::create_directories(fs::path(path).parent_path());
  WriteFileAtomically(path, bytes.str());
}

namespace {

TrainingState ReadState(torch::serialize::InputArchive& archive, const std::string& path, Model& model,
                        const std::string& mismatch_fix) {
  TrainingState s = ReadScalars(archive, path);
  // Before any tensor is read: another model's tensors would fail later with LibTorch's message.
  if (s.model_fingerprint != model.Fingerprint()) {
    throw ConfigError("checkpoint '" + path + "' holds a " + s.model_fingerprint + " model, but this one is " +
                      model.Fingerprint() + "; " + mismatch_fix);
  }
  archive.read("partial_losses", s.partial_losses);
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
  const TrainingState state = ReadScalars(archive, path);
  CheckpointSummary s;
  s.epoch = state.epoch;
  s.step_in_epoch = state.step_in_epoch;
  s.global_step = state.global_step;
  s.config_yaml = state.config_yaml;
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
