#include "util/config_schema.h"

#include <fmt/format.h>

#include <cmath>
#include <limits>
#include <map>
#include <sstream>
#include <type_traits>
#include <utility>

#include "util/error.h"

namespace ct {
namespace {

[[noreturn]] void Fail(const std::string& key, const std::string& where, const std::string& what) {
  throw ConfigError("config key '" + key + "' (" + where + "): " + what);
}

std::string Shown(const YAML::Node& node) {
  if (node.IsScalar()) return "'" + node.Scalar() + "'";
  YAML::Emitter out;  // one line, as it would be typed: [5, 1]
  out << YAML::Flow << node;
  return out.c_str();
}

template <class T>
T Convert(const YAML::Node& node, const std::string& key, const std::string& where, const std::string& expected) {
  if (!node.IsScalar()) Fail(key, where, "expected " + expected + ", got " + Shown(node));
  try {
    return node.as<T>();
  } catch (const YAML::Exception&) {
    Fail(key, where, "expected " + expected + ", got " + Shown(node));
  }
}

// Accessors return a reference into Config so that one lambda serves set and get.
template <class T>
using Access = std::function<T&(Config&)>;

ConfigKey Integer(std::string name, std::string help, Access<int64_t> access, int64_t min,
                  int64_t max = std::numeric_limits<int64_t>::max()) {
  std::string type = max == std::numeric_limits<int64_t>::max()
                         ? "integer >= " + std::to_string(min)
                         : "integer in [" + std::to_string(min) + ", " + std::to_string(max) + "]";
  ConfigKey key{name, type, help, nullptr, nullptr};
  key.set = [=](Config& c, const YAML::Node& node, const std::string& where) {
    // yaml-cpp accepts "1e3" as int64 only by truncation in some versions: be strict.
    const std::string text = node.IsScalar() ? node.Scalar() : "";
    if (text.find_first_of(".eE") != std::string::npos) Fail(name, where, "expected an integer, got " + Shown(node));
    auto value = Convert<int64_t>(node, name, where, "an integer");
    if (value < min || value > max) Fail(name, where, "must be an " + type + ", got " + std::to_string(value));
    access(c) = value;
  };
  key.get = [=](const Config& c) { return YAML::Node(access(const_cast<Config&>(c))); };
  return key;
}

// Every real key ends up in float32 tensors or arithmetic (the lr, the loss weights): a value
// float32 cannot hold (1e300 overflows to inf, 1e-50 flushes to 0) or .inf would fail later, on
// every rank, in LibTorch's words and without the key's name.
void CheckFloat32(const std::string& key, const std::string& where, double value) {
  const double magnitude = std::fabs(value);
  if (std::isfinite(value) && magnitude <= std::numeric_limits<float>::max() &&
      (magnitude == 0 || magnitude >= std::numeric_limits<float>::denorm_min())) {
    return;
  }
  std::ostringstream got;
  got << value;
  Fail(key, where,
       "must be a finite number that float32 can hold (0, or between 1.4e-45 and 3.4e38 in magnitude), got " +
           got.str());
}

// A number as people write it: 0.9, not the 0.90000000000000002 yaml-cpp writes for the double.
// fmt's shortest form reads back as the same double, so config.yaml round-trips (--resume compares).
YAML::Node NumberNode(double value) { return YAML::Node(fmt::format("{}", value)); }

// A real number in (min, max] when min_exclusive, else [min, max].
ConfigKey Real(std::string name, std::string help, Access<double> access, double min, bool min_exclusive,
               double max = std::numeric_limits<double>::infinity()) {
  std::ostringstream type;
  type << "number " << (min_exclusive ? "> " : ">= ") << min;
  if (std::isfinite(max)) type << " and <= " << max;
  const std::string type_name = type.str();
  ConfigKey key{name, type_name, help, nullptr, nullptr};
  key.set = [=](Config& c, const YAML::Node& node, const std::string& where) {
    auto value = Convert<double>(node, name, where, "a number");
    bool below = min_exclusive ? !(value > min) : !(value >= min);
    if (below || !(value <= max) || std::isnan(value)) {
      std::ostringstream got;
      got << value;
      Fail(name, where, "must be a " + type_name + ", got " + got.str());
    }
    CheckFloat32(name, where, value);
    access(c) = value;
  };
  key.get = [=](const Config& c) { return NumberNode(access(const_cast<Config&>(c))); };
  return key;
}

ConfigKey Text(std::string name, std::string help, Access<std::string> access) {
  ConfigKey key{name, "string", help, nullptr, nullptr};
  key.set = [=](Config& c, const YAML::Node& node, const std::string& where) {
    access(c) = Convert<std::string>(node, name, where, "a string");
  };
  key.get = [=](const Config& c) { return YAML::Node(access(const_cast<Config&>(c))); };
  return key;
}

// One of the spellings of enum E (util/choices.h), parsed here once into the enum.
template <class Accessor>
ConfigKey Choice(std::string name, std::string help, Accessor access) {
  using E = std::decay_t<decltype(access(std::declval<Config&>()))>;
  std::string joined;
  for (const auto& spelling : Spellings(E{})) joined += (joined.empty() ? "" : " | ") + std::string(spelling.name);
  ConfigKey key{name, joined, help, nullptr, nullptr};
  key.set = [=](Config& c, const YAML::Node& node, const std::string& where) {
    const auto text = Convert<std::string>(node, name, where, "one of " + joined);
    E value{};
    if (!FromName(text, value)) Fail(name, where, "must be one of " + joined + ", got '" + text + "'");
    access(c) = value;
  };
  key.get = [=](const Config& c) { return YAML::Node(NameOf(access(const_cast<Config&>(c)))); };
  return key;
}

ConfigKey IntegerList(std::string name, std::string help, Access<std::vector<int64_t>> access, int64_t min) {
  ConfigKey key{name, "list of integers >= " + std::to_string(min), help, nullptr, nullptr};
  key.set = [=](Config& c, const YAML::Node& node, const std::string& where) {
    if (!node.IsSequence() || node.size() == 0) {
      Fail(name, where, "expected a non-empty list such as [512, 256], got " + Shown(node));
    }
    std::vector<int64_t> values;
    for (const auto& item : node) {
      auto value = Convert<int64_t>(item, name, where, "a list of integers");
      if (value < min) Fail(name, where, "every entry must be >= " + std::to_string(min));
      values.push_back(value);
    }
    access(c) = values;
  };
  key.get = [=](const Config& c) { return YAML::Node(access(const_cast<Config&>(c))); };
  return key;
}

// [first, last]: two integers, 1 <= first <= last, at most kMaxTracedSteps apart; null (the
// default) is an empty list.
constexpr int64_t kMaxTracedSteps = 10000;  // every event stays in memory until the window closes

ConfigKey StepRange(std::string name, std::string help, Access<std::vector<int64_t>> access) {
  ConfigKey key{name, "[first, last], integers with 1 <= first <= last", help, nullptr, nullptr};
  key.set = [=](Config& c, const YAML::Node& node, const std::string& where) {
    if (node.IsNull()) {  // the default, off
      access(c).clear();
      return;
    }
    const std::string expected = "a list [first, last] of two step numbers such as [100, 110]";
    if (!node.IsSequence() || node.size() != 2) Fail(name, where, "expected " + expected + ", got " + Shown(node));
    const auto first = Convert<int64_t>(node[0], name, where, expected);
    const auto last = Convert<int64_t>(node[1], name, where, expected);
    if (first < 1 || last < first) {
      Fail(name, where, "needs 1 <= first <= last (global steps count from 1), got " + Shown(node));
    }
    if (last - first >= kMaxTracedSteps) {
      Fail(name, where,
           "traces at most " + std::to_string(kMaxTracedSteps) +
               " steps (every event stays in memory until the window closes), got " + Shown(node));
    }
    access(c) = {first, last};
  };
  key.get = [=](const Config& c) {
    const std::vector<int64_t>& steps = access(const_cast<Config&>(c));
    return steps.empty() ? YAML::Node(YAML::NodeType::Null) : YAML::Node(steps);  // null: written as ~
  };
  return key;
}

// "auto" or a positive integer; stored as 0 for auto.
ConfigKey AutoOrCount(std::string name, std::string help, Access<int64_t> access) {
  ConfigKey key{name, "auto | integer >= 1", help, nullptr, nullptr};
  key.set = [=](Config& c, const YAML::Node& node, const std::string& where) {
    if (node.IsScalar() && node.Scalar() == "auto") {
      access(c) = 0;
      return;
    }
    auto value = Convert<int64_t>(node, name, where, "auto or an integer");
    if (value < 1) Fail(name, where, "must be auto or >= 1, got " + std::to_string(value));
    access(c) = value;
  };
  key.get = [=](const Config& c) {
    const int64_t value = access(const_cast<Config&>(c));
    return value == 0 ? YAML::Node("auto") : NumberNode(value);
  };
  return key;
}

// "auto" or a size in GiB > 0; stored as 0 for auto.
ConfigKey AutoOrGiB(std::string name, std::string help, Access<double> access) {
  ConfigKey key{name, "auto | number > 0 (GiB)", help, nullptr, nullptr};
  key.set = [=](Config& c, const YAML::Node& node, const std::string& where) {
    if (node.IsScalar() && node.Scalar() == "auto") {
      access(c) = 0;
      return;
    }
    auto value = Convert<double>(node, name, where, "auto or a number of GiB");
    if (!(value > 0) || !std::isfinite(value)) Fail(name, where, "must be auto or a number of GiB > 0");
    CheckFloat32(name, where, value);
    access(c) = value;
  };
  key.get = [=](const Config& c) {
    const double value = access(const_cast<Config&>(c));
    return value == 0 ? YAML::Node("auto") : NumberNode(value);
  };
  return key;
}

// A mapping of names to values, all kept as strings (MPI-IO hints take strings).
ConfigKey TextMap(std::string name, std::string help, Access<std::map<std::string, std::string>> access) {
  ConfigKey key{name, "mapping of names to values", help, nullptr, nullptr};
  key.set = [=](Config& c, const YAML::Node& node, const std::string& where) {
    if (!node.IsMap()) Fail(name, where, "expected a mapping such as {romio_cb_read: enable}, got " + Shown(node));
    std::map<std::string, std::string> values;
    for (const auto& item : node) {
      const std::string entry = item.first.as<std::string>();
      if (!item.second.IsScalar()) Fail(name, where, "the value of '" + entry + "' must be a single value");
      values[entry] = item.second.Scalar();
    }
    access(c) = values;
  };
  key.get = [=](const Config& c) {
    YAML::Node node(YAML::NodeType::Map);
    for (const auto& [entry, value] : access(const_cast<Config&>(c))) node[entry] = value;
    return node;
  };
  return key;
}

// One file, or a list of files and glob patterns: kept as written, a list of one when scalar.
ConfigKey Files(std::string name, std::string help, Access<std::vector<std::string>> access) {
  ConfigKey key{name, "path | list of paths and glob patterns", help, nullptr, nullptr};
  key.set = [=](Config& c, const YAML::Node& node, const std::string& where) {
    std::vector<std::string> specs;
    if (node.IsSequence()) {
      if (node.size() == 0) Fail(name, where, "expected a file or a non-empty list of files, got []");
      for (const auto& item : node) specs.push_back(Convert<std::string>(item, name, where, "a list of file names"));
    } else {
      specs.push_back(Convert<std::string>(node, name, where, "a file name, a glob pattern or a list of them"));
    }
    for (const std::string& spec : specs) {
      if (spec.empty() && specs.size() > 1) Fail(name, where, "a file name in the list is empty");
    }
    if (specs.size() == 1 && specs[0].empty()) specs.clear();  // "--set data.val=": unset
    access(c) = specs;
  };
  key.get = [=](const Config& c) {
    const std::vector<std::string>& specs = access(const_cast<Config&>(c));
    return specs.size() == 1 ? YAML::Node(specs[0]) : specs.empty() ? YAML::Node("") : YAML::Node(specs);
  };
  return key;
}

ConfigKey Boolean(std::string name, std::string help, Access<bool> access) {
  ConfigKey key{name, "true | false", help, nullptr, nullptr};
  key.set = [=](Config& c, const YAML::Node& node, const std::string& where) {
    access(c) = Convert<bool>(node, name, where, "true or false");
  };
  key.get = [=](const Config& c) { return YAML::Node(access(const_cast<Config&>(c))); };
  return key;
}

constexpr double kInf = std::numeric_limits<double>::infinity();

// The training and validation files, and how ranks read them.
std::vector<ConfigKey> DataKeys() {
  return {
      Files(
          "data.train",
          "HDF5 file(s) with the training rows (required): a path, a list, or a glob such as data/bank-*.h5 "
          "(sorted); several files are one dataset, their rows one after another",
          [](Config & c) -> auto& { return c.data.train; }),
      Files(
          "data.val", "HDF5 file(s) with the validation rows, as data.train (or set data.val_fraction)",
          [](Config & c) -> auto& { return c.data.val; }),
      Real(
          "data.val_fraction",
          "instead of data.val: validate on this fraction of data.train's rows, its last rows (of the last "
          "file), never trained on; 0 = off",
          [](Config & c) -> auto& { return c.data.val_fraction; }, 0, false, 0.9),
      Text(
          "data.input_key", "dataset holding the model input (batch field 'input'), shape [N, L]",
          [](Config & c) -> auto& { return c.data.input_key; }),
      Text(
          "data.target_key", "dataset holding the reconstruction target (batch field 'target'), shape [N, L]",
          [](Config & c) -> auto& { return c.data.target_key; }),
      TextMap(
          "data.fields",
          "batch fields and the datasets they are read from, e.g. {strain: input, params: params}; each its own "
          "row shape, all with the same rows; empty = {input: data.input_key, target: data.target_key}",
          [](Config & c) -> auto& { return c.data.fields; }),
      Choice(
          "data.sharding",
          "static: each rank reads its contiguous rows once and keeps them in memory; blocks: streams "
          "blocks of rows with a reader thread (data larger than memory); replicated: every rank holds all "
          "rows and takes its part of each globally shuffled batch, so 1 and N ranks with the same global batch "
          "train on the same batches (as DistributedSampler); auto: static if it fits data.memory_budget",
          [](Config & c) -> auto& { return c.data.sharding; }),
      AutoOrGiB(
          "data.memory_budget",
          "memory a rank may hold training rows in (static sharding); auto = half the node's RAM "
          "shared by its ranks",
          [](Config & c) -> auto& { return c.data.memory_budget_gib; }),
      AutoOrCount(
          "data.block_rows",
          "blocks sharding: rows per block; auto = the file's chunk rows (a multiple of them, >= 1 MiB)",
          [](Config & c) -> auto& { return c.data.block_rows; }),
      Integer(
          "data.shuffle_window", "blocks sharding: blocks whose rows are shuffled together",
          [](Config & c) -> auto& { return c.data.shuffle_window; }, 1),
      Integer(
          "data.prefetch", "blocks sharding: batches the reader thread keeps ready ahead of training",
          [](Config & c) -> auto& { return c.data.prefetch; }, 1),
      TextMap(
          "data.mpi_hints",
          "MPI-IO hints for the collective reads, e.g. {romio_cb_read: enable, cb_buffer_size: 16777216} "
          "(README: Lustre and GPFS settings)",
          [](Config & c) -> auto& { return c.data.mpi_hints; }),
  };
}

// The model and its loss.
std::vector<ConfigKey> ModelKeys() {
  return {
      Choice(
          "model.kind",
          "vae_mlp (fully connected), vae_conv1d (strided Conv1d encoder, ConvTranspose1d decoder), or "
          "torchscript (a module saved from Python: model.path)",
          [](Config & c) -> auto& { return c.model.kind; }),
      IntegerList(
          "model.hidden", "vae_mlp: encoder layer widths; the decoder mirrors them",
          [](Config & c) -> auto& { return c.model.hidden; }, 1),
      IntegerList(
          "model.channels", "vae_conv1d: output channels of each strided encoder convolution",
          [](Config & c) -> auto& { return c.model.channels; }, 1),
      Integer(
          "model.kernel_size", "vae_conv1d: convolution kernel size",
          [](Config & c) -> auto& { return c.model.kernel_size; }, 1),
      Integer(
          "model.stride", "vae_conv1d: stride of each encoder convolution (the decoder's upsampling)",
          [](Config & c) -> auto& { return c.model.stride; }, 1),
      Text(
          "model.path", "torchscript: the module file written by torch.jit.script(model).save(path)",
          [](Config & c) -> auto& { return c.model.path; }),
      Integer(
          "model.latent", "latent dimension", [](Config & c) -> auto& { return c.model.latent; }, 1),
      Real(
          "model.beta", "weight of the KL term in the loss", [](Config & c) -> auto& { return c.model.beta; }, 0.0,
          false),
  };
}

// The optimisation: epochs, batch, learning rate, optimizer, precision, safety checks.
std::vector<ConfigKey> TrainKeys() {
  return {
      Integer(
          "train.epochs", "number of epochs", [](Config & c) -> auto& { return c.train.epochs; }, 1),
      AutoOrCount(
          "train.batch_size",
          "samples per batch on each rank; auto: the size train.autotune's timed search picks before epoch 1 (kept "
          "by a resume)",
          [](Config & c) -> auto& { return c.train.batch_size; }),
      Real(
          "train.lr", "base learning rate, tuned for train.base_batch", [](Config & c) -> auto& { return c.train.lr; },
          0.0, true),
      Integer(
          "train.base_batch", "global batch for which train.lr was tuned",
          [](Config & c) -> auto& { return c.train.base_batch; }, 1),
      Choice(
          "train.lr_scaling", "how lr follows the global batch",
          [](Config & c) -> auto& { return c.train.lr_scaling; }),
      Real(
          "train.warmup_epochs", "epochs over which lr rises linearly from train.lr to the scaled lr",
          [](Config & c) -> auto& { return c.train.warmup_epochs; }, 0.0, false),
      Integer(
          "train.seed", "seed for initial weights, data order and sampling noise",
          [](Config & c) -> auto& { return c.train.seed; }, 0),
      Choice(
          "train.device", "auto = CUDA when LibTorch has it and a GPU is visible",
          [](Config & c) -> auto& { return c.train.device; }),
      Integer(
          "train.accumulation_steps",
          "micro-batches whose gradients are summed before one all-reduce and optimizer step",
          [](Config & c) -> auto& { return c.train.accumulation_steps; }, 1),
      Real(
          "train.clip_grad_norm",
          "clip the averaged gradients to this global L2 norm before each optimizer step, as "
          "torch.nn.utils.clip_grad_norm_ does; 0 = off",
          [](Config & c) -> auto& { return c.train.clip_grad_norm; }, 0.0, false),
      Choice(
          "train.optimizer",
          "adamw: torch.optim.AdamW (with train.weight_decay 0, the default, plain Adam); adam: torch.optim.Adam, "
          "weight decay as an L2 term of the gradient; sgd: torch.optim.SGD with train.momentum",
          [](Config & c) -> auto& { return c.train.optimizer; }),
      Real(
          "train.weight_decay",
          "adamw: decoupled weight decay (each step multiplies the weights by 1 - lr x weight_decay); adam, sgd: "
          "weight_decay x weights added to the gradient, as torch.optim does; 0 = none",
          [](Config & c) -> auto& { return c.train.weight_decay; }, 0.0, false),
      Real(
          "train.momentum", "sgd: momentum (torch.optim.SGD's, no dampening); 0 = plain SGD",
          [](Config & c) -> auto& { return c.train.momentum; }, 0.0, false, 0.999),
      Integer(
          "train.early_stop_patience",
          "stop after this many epochs without an improvement of train.monitor (plateau threshold); 0 = off",
          [](Config & c) -> auto& { return c.train.early_stop_patience; }, 0),
      Text(
          "train.monitor",
          "what ReduceLROnPlateau, early stopping and best.pt follow: val/loss, train/loss, or val/<metric> / "
          "train/<metric> of the model's metrics, in the direction of train.plateau.mode (min or max)",
          [](Config & c) -> auto& { return c.train.monitor; }),
      Integer(
          "train.nan_check_every",
          "check the all-reduced loss for NaN/Inf every N steps (a host sync per check); 0 = at epoch ends only",
          [](Config & c) -> auto& { return c.train.nan_check_every; }, 0),
      Choice(
          "train.on_nonfinite", "a non-finite loss: stop (exit 5), or skip that step (checked steps only)",
          [](Config & c) -> auto& { return c.train.on_nonfinite; }),
      Choice(
          "train.precision",
          "fp32, or bf16: forward passes under autocast (bfloat16 matmuls and convolutions, float32 weights, "
          "gradients and loss)",
          [](Config & c) -> auto& { return c.train.precision; }),
  };
}

// ReduceLROnPlateau on the all-reduced validation loss.
std::vector<ConfigKey> PlateauKeys() {
  return {
      Choice(
          "train.plateau.mode",
          "ReduceLROnPlateau: minimise or maximise train.monitor (also for early stop and best.pt)",
          [](Config & c) -> auto& { return c.train.plateau.mode; }),
      Real(
          "train.plateau.factor", "ReduceLROnPlateau: lr multiplier on a plateau",
          [](Config & c) -> auto& { return c.train.plateau.factor; }, 0.0, true, 0.999999),
      Integer(
          "train.plateau.patience", "ReduceLROnPlateau: bad epochs tolerated",
          [](Config & c) -> auto& { return c.train.plateau.patience; }, 0),
      Real(
          "train.plateau.threshold", "ReduceLROnPlateau: least change that counts",
          [](Config & c) -> auto& { return c.train.plateau.threshold; }, 0.0, false),
      Choice(
          "train.plateau.threshold_mode", "ReduceLROnPlateau: rel or abs threshold",
          [](Config & c) -> auto& { return c.train.plateau.threshold_mode; }),
      Integer(
          "train.plateau.cooldown", "ReduceLROnPlateau: epochs to wait after a reduction",
          [](Config & c) -> auto& { return c.train.plateau.cooldown; }, 0),
      Real(
          "train.plateau.min_lr", "ReduceLROnPlateau: lower bound on lr",
          [](Config & c) -> auto& { return c.train.plateau.min_lr; }, 0.0, false),
      Real(
          "train.plateau.eps", "ReduceLROnPlateau: smaller lr changes are ignored",
          [](Config & c) -> auto& { return c.train.plateau.eps; }, 0.0, false, kInf),
  };
}

// train.batch_size=auto: the timed batch search.
std::vector<ConfigKey> AutotuneKeys() {
  return {
      Integer(
          "train.autotune.min", "batch_size auto: the first per-rank size timed (then doubled each time)",
          [](Config & c) -> auto& { return c.train.autotune.min; }, 1),
      Integer(
          "train.autotune.max", "batch_size auto: the largest per-rank size tried",
          [](Config & c) -> auto& { return c.train.autotune.max; }, 1),
      Real(
          "train.autotune.memory_fraction",
          "batch_size auto: the share of the memory available at start (the GPU's free memory, or the rank's share "
          "of the host's) a step may use",
          [](Config & c) -> auto& { return c.train.autotune.memory_fraction; }, 0.0, true, 1.0),
      Real(
          "train.autotune.min_gain",
          "batch_size auto: the least gain in samples/s over half the size for which a size is taken",
          [](Config & c) -> auto& { return c.train.autotune.min_gain; }, 0.0, false),
      Integer(
          "train.autotune.steps", "batch_size auto: timed steps per size (after 2 untimed)",
          [](Config & c) -> auto& { return c.train.autotune.steps; }, 1),
  };
}

// The run directory: checkpoints, metrics, traces.
std::vector<ConfigKey> OutputKeys() {
  return {
      Text(
          "output.dir",
          "run directory (config.yaml, metrics.jsonl, logs/, model.pt); may hold {job}, {array_task} and "
          "{rank_count} (Slurm job arrays: one directory per task)",
          [](Config & c) -> auto& { return c.output.dir; }),
      Integer(
          "output.log_every", "progress lines: rank 0 prints one every N batches; 0 = off",
          [](Config & c) -> auto& { return c.output.log_every; }, 0),
      Choice(
          "output.progress",
          "bar: redrawn in place; lines: plain lines for logs; auto: bar on a terminal outside mpirun",
          [](Config & c) -> auto& { return c.output.progress; }),
      Integer(
          "output.checkpoint_every", "epochs between checkpoints; 0 = only at the end",
          [](Config & c) -> auto& { return c.output.checkpoint_every; }, 0),
      Integer(
          "output.keep", "newest checkpoints kept in output.dir/checkpoints (best.pt is kept besides)",
          [](Config & c) -> auto& { return c.output.keep; }, 1),
      Boolean(
          "output.tensorboard",
          "TensorBoard event files in output.dir/tensorboard: every epoch record and the training loss every "
          "output.log_every steps (tensorboard --logdir)",
          [](Config & c) -> auto& { return c.output.tensorboard; }),
      StepRange(
          "output.trace.steps",
          "timeline trace of the global steps [first, last] (1-based, inclusive; with the validation and "
          "checkpoints among them): output.dir/trace/rank-<r>.json, Chrome trace-event JSON for Perfetto; "
          "clustertrain trace summary|merge read it",
          [](Config & c) -> auto& { return c.output.trace_steps; }),
  };
}

// Threads, devices and communication.
std::vector<ConfigKey> RuntimeKeys() {
  return {
      Choice(
          "runtime.bind",
          "auto: bind this rank to the cores next to its GPU (or its share of the node) with hwloc; "
          "none: keep the launcher's binding",
          [](Config & c) -> auto& { return c.runtime.bind; }),
      AutoOrCount(
          "runtime.threads", "intra-op threads per rank; auto = the cores this rank is bound to",
          [](Config & c) -> auto& { return c.runtime.threads; }),
      AutoOrCount(
          "runtime.interop_threads", "inter-op threads per rank; auto = LibTorch's default",
          [](Config & c) -> auto& { return c.runtime.interop_threads; }),
      Boolean(
          "runtime.flush_denormal",
          "CPU arithmetic flushes subnormal floats to zero (FTZ/DAZ, torch.set_flush_denormal): a trained VAE's "
          "tiny values otherwise slow the CPU step 1.6x; false keeps PyTorch's default",
          [](Config & c) -> auto& { return c.runtime.flush_denormal; }),
      Choice(
          "runtime.tf32",
          "CUDA: float32 matmuls and convolutions on TF32 tensor cores (10-bit mantissa inputs, float32 sums); "
          "auto = on for Ampere (sm_80) and later; no effect on CPU",
          [](Config & c) -> auto& { return c.runtime.tf32; }),
      Choice(
          "runtime.cuda_graph",
          "CUDA: capture the whole step (forward, backward, all-reduce, Adam) in one CUDA graph and replay it; "
          "on: where it can (else eager steps, with the reason logged); auto: eager until checked on a GPU",
          [](Config & c) -> auto& { return c.runtime.cuda_graph; }),
      Choice(
          "runtime.backend", "gradient all-reduce: auto = nccl for CUDA, mpi for CPU",
          [](Config & c) -> auto& { return c.runtime.backend; }),
      Real(
          "runtime.bucket_mb", "gradient bucket size in MiB: one all-reduce per bucket",
          [](Config & c) -> auto& { return c.runtime.bucket_mb; }, 0.0, true),
      Boolean(
          "runtime.overlap", "all-reduce buckets while backward is still running (false: all after backward)",
          [](Config & c) -> auto& { return c.runtime.overlap; }),
      Choice(
          "runtime.allreduce_precision",
          "gradients all-reduced as fp32, or as bf16 (half the bytes; averaged in bfloat16)",
          [](Config & c) -> auto& { return c.runtime.allreduce_precision; }),
      Boolean(
          "runtime.shard_optimizer",
          "CPU, Adam/AdamW: the ranks on a node split the update (each updates 1/N of the parameters and moments, "
          "then they all-gather the parameters) instead of each streaming all of it through the memory they share; "
          "the same numbers either way",
          [](Config & c) -> auto& { return c.runtime.shard_optimizer; }),
      Real(
          "runtime.comm_timeout_s", "NCCL: a collective running longer than this aborts the job (a peer died or hangs)",
          [](Config & c) -> auto& { return c.runtime.comm_timeout_s; }, 0.0, true),
      Real(
          "runtime.watchdog_s",
          "a rank that makes no progress (step, validation batch, checkpoint) this long ends the job; 0 = off",
          [](Config & c) -> auto& { return c.runtime.watchdog_s; }, 0.0, false),
  };
}

// Every key, in the order --help-config lists them.
std::vector<ConfigKey> BuildKeys() {
  std::vector<ConfigKey> keys;
  for (auto section : {DataKeys, ModelKeys, TrainKeys, PlateauKeys, AutotuneKeys, OutputKeys, RuntimeKeys}) {
    std::vector<ConfigKey> part = section();
    keys.insert(keys.end(), part.begin(), part.end());
  }
  return keys;
}

}  // namespace

const std::vector<ConfigKey>& ConfigKeys() {
  static const std::vector<ConfigKey> keys = BuildKeys();
  return keys;
}

}  // namespace ct
