// Enumerated config values. The schema (util/config_schema.cpp) parses each spelling once into
// its enum; code compares enums, never strings. NameOf() gives the spelling back for messages
// and the resolved config.yaml.
#pragma once

#include <string>
#include <vector>

namespace ct {

enum class Sharding { kAuto, kStatic, kBlocks, kReplicated };  // data.sharding
enum class ModelKind { kVaeMlp, kVaeConv1d, kTorchScript };    // model.kind
enum class LrScaling { kLinear, kSqrt, kNone };                // train.lr_scaling
enum class DeviceChoice { kAuto, kCpu, kCuda };                // train.device
enum class OnNonFinite { kStop, kSkip };                       // train.on_nonfinite
enum class OptimizerKind { kAdamW, kAdam, kSgd };              // train.optimizer
enum class Precision { kFp32, kBf16 };                         // train.precision, runtime.allreduce_precision
enum class PlateauMode { kMin, kMax };                         // train.plateau.mode
enum class ThresholdMode { kRel, kAbs };                       // train.plateau.threshold_mode
enum class ProgressStyle { kAuto, kBar, kLines };              // output.progress
enum class Binding { kAuto, kNone };                           // runtime.bind
enum class BackendChoice { kAuto, kMpi, kNccl };               // runtime.backend
enum class AutoOnOff { kAuto, kOn, kOff };                     // runtime.tf32, runtime.cuda_graph

template <class E>
struct Spelling {
  const char* name;
  E value;
};

// Every value of the enum with its config spelling, in the order --help-config lists them.
// The argument only selects the enum.
const std::vector<Spelling<Sharding>>& Spellings(Sharding);
const std::vector<Spelling<ModelKind>>& Spellings(ModelKind);
const std::vector<Spelling<LrScaling>>& Spellings(LrScaling);
const std::vector<Spelling<DeviceChoice>>& Spellings(DeviceChoice);
const std::vector<Spelling<OnNonFinite>>& Spellings(OnNonFinite);
const std::vector<Spelling<OptimizerKind>>& Spellings(OptimizerKind);
const std::vector<Spelling<Precision>>& Spellings(Precision);
const std::vector<Spelling<PlateauMode>>& Spellings(PlateauMode);
const std::vector<Spelling<ThresholdMode>>& Spellings(ThresholdMode);
const std::vector<Spelling<ProgressStyle>>& Spellings(ProgressStyle);
const std::vector<Spelling<Binding>>& Spellings(Binding);
const std::vector<Spelling<BackendChoice>>& Spellings(BackendChoice);
const std::vector<Spelling<AutoOnOff>>& Spellings(AutoOnOff);

// "bf16" for Precision::kBf16.
template <class E>
const char* NameOf(E value) {
  for (const auto& spelling : Spellings(value)) {
    if (spelling.value == value) return spelling.name;
  }
  return "?";
}

// The value spelled `name` into `value`; false when no value has that spelling.
template <class E>
bool FromName(const std::string& name, E& value) {
  for (const auto& spelling : Spellings(value)) {
    if (name == spelling.name) {
      value = spelling.value;
      return true;
    }
  }
  return false;
}

}  // namespace ct
