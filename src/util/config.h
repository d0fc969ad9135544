// The run configuration: YAML file + --set overrides, every key validated.
//
// Keys are listed once, in config_schema.cpp, with their type, range and help text; loading,
// overriding, validating, printing --help-config and writing the resolved config.yaml all read
// that one table.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "util/choices.h"

namespace ct {

struct DataConfig {
  // HDF5 files: paths and glob patterns as written (util/data_paths.h expands them).
  std::vector<std::string> train;     // the training rows
  std::vector<std::string> val;       // the validation rows (none with val_fraction)
  double val_fraction = 0;            // > 0: validate on the training rows' last rows (ValidationRows) instead
  std::string input_key = "input";    // the default field `input`'s dataset
  std::string target_key = "target";  // the default field `target`'s dataset
  // Batch field -> HDF5 dataset, e.g. {strain: input, params: params}; empty: {input: input_key,
  // target: target_key}. DataFields() resolves it.
  std::map<std::string, std::string> fields;
  Sharding sharding = Sharding::kAuto;  // auto: static if this rank's rows fit memory_budget
  double memory_budget_gib = 0;         // per rank, for static sharding; 0 = auto (half of RAM / local ranks)
  int64_t block_rows = 0;               // blocks mode: rows per block; 0 = auto (the file's chunk rows, >= 1 MiB)
  int64_t shuffle_window = 16;          // blocks mode: blocks whose rows are shuffled together
  int64_t prefetch = 4;                 // blocks mode: batches read ahead by the reader thread
  std::map<std::string, std::string> mpi_hints;  // MPI-IO hints for collective opens (MPI_Info)
};

// One batch field and the HDF5 dataset its rows are read from: {"strain", "input"}.
struct DataField {
  std::string name;
  std::string dataset;
};

// The batch's fields in order: data.fields, or {input: input_key, target: target_key}.
std::vector<DataField> DataFields(const DataConfig& data);

struct ModelConfig {
  ModelKind kind = ModelKind::kVaeMlp;
  std::vector<int64_t> hidden = {512, 256};      // vae_mlp: encoder widths; the decoder mirrors them
  std::vector<int64_t> channels = {16, 32, 64};  // vae_conv1d: encoder channels per strided layer
  int64_t kernel_size = 7;                       // vae_conv1d
  int64_t stride = 2;                            // vae_conv1d
  std::string path;                              // torchscript: the module file
  int64_t latent = 16;
  double beta = 1e-3;  // weight of the KL term
};

struct PlateauConfig {  // torch.optim.lr_scheduler.ReduceLROnPlateau's arguments
  PlateauMode mode = PlateauMode::kMin;
  double factor = 0.2;
  int64_t patience = 4;
  double threshold = 1e-4;
  ThresholdMode threshold_mode = ThresholdMode::kRel;
  int64_t cooldown = 0;
  double min_lr = 0.0;
  double eps = 1e-8;
};

// train.batch_size: auto (train/batch_autotune.h): the sizes tried and when the search stops.
struct AutotuneConfig {
  int64_t min = 16;    // the first size tried; then twice as large each time
  int64_t max = 4096;  // no size above this (nor above the rows a rank holds)
  double memory_fraction =
      0.8;                 // of the memory available at the start (the GPU's free, or the rank's share of the host's)
  double min_gain = 0.05;  // a size must give this much more samples/s than half of it
  int64_t steps = 5;       // timed steps per size (after 2 untimed)
};

struct TrainConfig {
  int64_t epochs = 10;
  int64_t batch_size = 128;  // per rank; 0: auto (chosen before epoch 1 by train/batch_autotune.h)
  double lr = 1e-3;          // base lr, tuned for base_batch
  int64_t base_batch = 128;
  LrScaling lr_scaling = LrScaling::kLinear;
  double warmup_epochs = 0.0;
  int64_t seed = 1234;
  DeviceChoice device = DeviceChoice::kAuto;
  int64_t accumulation_steps = 1;    // micro-batches per optimizer step
  int64_t early_stop_patience = 0;   // 0 = never stop early
  std::string monitor = "val/loss";  // what the plateau, early stopping and best.pt follow (run/metrics.h)
  double clip_grad_norm = 0.0;       // max global L2 norm of the averaged gradients; 0 = no clipping
  OptimizerKind optimizer = OptimizerKind::kAdamW;  // train/optimizer.h
  double weight_decay = 0.0;                        // adamw: decoupled; adam, sgd: L2 added to the gradient; 0 = none
  double momentum = 0.9;                            // sgd
  int64_t nan_check_every = 0;  // steps between non-finite-loss checks (a host sync); 0 = epoch ends only
  OnNonFinite on_nonfinite = OnNonFinite::kStop;  // skip (the step) needs nan_check_every
  Precision precision = Precision::kFp32;         // bf16: autocast in the forward pass
  PlateauConfig plateau;
  AutotuneConfig autotune;
};

struct OutputConfig {
  std::string dir = "runs/default";
  int64_t log_every = 100;  // progress lines: one every N batches (0 = off)
  ProgressStyle progress = ProgressStyle::kAuto;
  int64_t checkpoint_every = 1;  // epochs between checkpoints (0: only at the end)
  int64_t keep = 3;              // checkpoints kept
  bool tensorboard = true;       // event files in dir/tensorboard
  // Global steps [first, last] (1-based, inclusive) recorded in the timeline trace
  // (run/trace_window.h); empty: no trace.
  std::vector<int64_t> trace_steps;
};

struct RuntimeConfig {
  Binding bind = Binding::kAuto;            // auto: hwloc self-binding; none: keep the launcher's binding
  int64_t threads = 0;                      // 0 = auto: the cores this rank is bound to
  int64_t interop_threads = 0;              // 0 = auto: LibTorch's default
  bool flush_denormal = true;               // CPU: subnormal floats become zero (FTZ/DAZ), see self_binding.cpp
  AutoOnOff tf32 = AutoOnOff::kAuto;        // CUDA: TF32 tensor-core matmuls and convolutions (cluster/tf32.h)
  AutoOnOff cuda_graph = AutoOnOff::kAuto;  // CUDA: the step replayed from one graph (train/cuda_graph_step.h)
  BackendChoice backend = BackendChoice::kAuto;
  double bucket_mb = 25.0;                           // gradient bucket size (PyTorch DDP's default)
  bool overlap = true;                               // all-reduce buckets during backward
  Precision allreduce_precision = Precision::kFp32;  // bf16: gradients sent as bfloat16, half the bytes
  bool shard_optimizer = true;                       // CPU: a node's ranks split Adam's update (train/flat_adam.h)
  double comm_timeout_s = 60.0;                      // NCCL watchdog: a collective stuck this long ends the job
  double watchdog_s = 60.0;                          // a rank without progress this long ends the job (0: off)
};

struct Config {
  DataConfig data;
  ModelConfig model;
  TrainConfig train;
  OutputConfig output;
  RuntimeConfig runtime;
};

// Reads `path` (empty: defaults only), applies "section.key=value" overrides in order, validates
// every key and the relations between them. Throws ConfigError naming key, source and fix.
Config LoadConfig(const std::string& path, const std::vector<std::string>& overrides);

// The same from YAML text (a checkpoint's config); `source` names it in errors.
Config LoadConfigText(const std::string& yaml, const std::string& source, const std::vector<std::string>& overrides);

// The data files exist and are regular files (a clear error before any rank opens them).
void CheckInputFiles(const Config& config);

// The resolved configuration as YAML (written to <run dir>/config.yaml).
std::string ConfigToYaml(const Config& config);

// Every key with its value as YAML text ("train.lr", "0.001"), in the order of --help-config.
std::vector<std::pair<std::string, std::string>> ConfigValues(const Config& config);

// Every key with its type, default and meaning, for `clustertrain train --help-config`.
std::string ConfigKeyHelp();

}  // namespace ct
