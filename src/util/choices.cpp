#include "util/choices.h"

namespace ct {

const std::vector<Spelling<Sharding>>& Spellings(Sharding) {
  static const std::vector<Spelling<Sharding>> all{{"auto", Sharding::kAuto},
                                                   {"static", Sharding::kStatic},
                                                   {"blocks", Sharding::kBlocks},
                                                   {"replicated", Sharding::kReplicated}};
  return all;
}

const std::vector<Spelling<ModelKind>>& Spellings(ModelKind) {
  static const std::vector<Spelling<ModelKind>> all{
      {"vae_mlp", ModelKind::kVaeMlp}, {"vae_conv1d", ModelKind::kVaeConv1d}, {"torchscript", ModelKind::kTorchScript}};
  return all;
}

const std::vector<Spelling<LrScaling>>& Spellings(LrScaling) {
  static const std::vector<Spelling<LrScaling>> all{
      {"linear", LrScaling::kLinear}, {"sqrt", LrScaling::kSqrt}, {"none", LrScaling::kNone}};
  return all;
}

const std::vector<Spelling<DeviceChoice>>& Spellings(DeviceChoice) {
  static const std::vector<Spelling<DeviceChoice>> all{
      {"auto", DeviceChoice::kAuto}, {"cpu", DeviceChoice::kCpu}, {"cuda", DeviceChoice::kCuda}};
  return all;
}

const std::vector<Spelling<OptimizerKind>>& Spellings(OptimizerKind) {
  static const std::vector<Spelling<OptimizerKind>> all{
      {"adamw", OptimizerKind::kAdamW}, {"adam", OptimizerKind::kAdam}, {"sgd", OptimizerKind::kSgd}};
  return all;
}

const std::vector<Spelling<OnNonFinite>>& Spellings(OnNonFinite) {
  static const std::vector<Spelling<OnNonFinite>> all{{"stop", OnNonFinite::kStop}, {"skip", OnNonFinite::kSkip}};
  return all;
}

const std::vector<Spelling<Precision>>& Spellings(Precision) {
  static const std::vector<Spelling<Precision>> all{{"fp32", Precision::kFp32}, {"bf16", Precision::kBf16}};
  return all;
}

const std::vector<Spelling<PlateauMode>>& Spellings(PlateauMode) {
  static const std::vector<Spelling<PlateauMode>> all{{"min", PlateauMode::kMin}, {"max", PlateauMode::kMax}};
  return all;
}

const std::vector<Spelling<ThresholdMode>>& Spellings(ThresholdMode) {
  static const std::vector<Spelling<ThresholdMode>> all{{"rel", ThresholdMode::kRel}, {"abs", ThresholdMode::kAbs}};
  return all;
}

const std::vector<Spelling<ProgressStyle>>& Spellings(ProgressStyle) {
  static const std::vector<Spelling<ProgressStyle>> all{
      {"auto", ProgressStyle::kAuto}, {"bar", ProgressStyle::kBar}, {"lines", ProgressStyle::kLines}};
  return all;
}

const std::vector<Spelling<Binding>>& Spellings(Binding) {
  static const std::vector<Spelling<Binding>> all{{"auto", Binding::kAuto}, {"none", Binding::kNone}};
  return all;
}

const std::vector<Spelling<BackendChoice>>& Spellings(BackendChoice) {
  static const std::vector<Spelling<BackendChoice>> all{
      {"auto", BackendChoice::kAuto}, {"mpi", BackendChoice::kMpi}, {"nccl", BackendChoice::kNccl}};
  return all;
}

const std::vector<Spelling<AutoOnOff>>& Spellings(AutoOnOff) {
  static const std::vector<Spelling<AutoOnOff>> all{
      {"auto", AutoOnOff::kAuto}, {"on", AutoOnOff::kOn}, {"off", AutoOnOff::kOff}};
  return all;
}

}  // namespace ct
