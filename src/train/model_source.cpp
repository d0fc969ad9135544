#include "train/model_source.h"

#include <c10/core/GradMode.h>

#include <exception>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "train/checkpoint.h"
#include "train/model_io.h"
#include "util/error.h"
#include "util/zip_check.h"

namespace ct {
namespace {

std::string ShapeText(const at::Tensor& t) {
  std::string text = "[";
  for (const int64_t d : t.sizes()) text += (text.size() > 1 ? ", " : "") + std::to_string(d);
  return text + "]";
}

}  // namespace

ModelSource ReadModelSource(const std::string& path) {
  std::exception_ptr not_a_checkpoint;
  try {
    return {ReadCheckpointSummary(path).config_yaml, "the config in checkpoint '" + path + "'", std::nullopt};
  } catch (const Error&) {
    not_a_checkpoint = std::current_exception();
  }
  // A state dict? Only an intact archive is read as one (LibTorch skips the records' CRC-32s).
  std::optional<c10::Dict<std::string, at::Tensor>> weights;
  if (ZipIntegrityProblem(path).empty()) {
    try {
      weights = LoadStateDict(path);
    } catch (const std::exception&) {
    }
  }
  if (!weights) std::rethrow_exception(not_a_checkpoint);
  const std::string config_path = (std::filesystem::path(path).parent_path() / "config.yaml").string();
  std::ifstream file(config_path);
  std::stringstream yaml;
  yaml << file.rdbuf();
  if (!file) {
    throw ConfigError(
        "'" + path +
        "' holds a model's weights (a state dict, as output.dir/model.pt and best.pt are), but no "
        "config.yaml beside it says which model they belong to: give a checkpoint "
        "(output.dir/checkpoints/best.pt or epoch-NNNNNN.pt), or keep the weights in their run directory");
  }
  return {yaml.str(), "the run's config '" + config_path + "' (beside the weights '" + path + "')", std::move(weights)};
}

void LoadWeights(const c10::Dict<std::string, at::Tensor>& weights, Model& model, const std::string& path,
                 const std::string& mismatch_fix) {
  const std::vector<NamedTensor> state = model.State();
  std::string missing, extra;
  for (const NamedTensor& item : state) {
    if (!weights.contains(item.name)) missing += (missing.empty() ? "'" : ", '") + item.name + "'";
  }
  for (const auto& entry : weights) {
    bool known = false;
    for (const NamedTensor& item : state) known = known || item.name == entry.key();
    if (!known) extra += (extra.empty() ? "'" : ", '") + entry.key() + "'";
  }
  if (!missing.empty() || !extra.empty()) {
    throw ConfigError("the weights '" + path + "' do not fit this model (" + model.Describe() +
                      "): " + (missing.empty() ? "" : "it lacks " + missing + (extra.empty() ? "" : "; ")) +
                      (extra.empty() ? "" : "it holds tensors the model does not have: " + extra) + "; " +
                      mismatch_fix);
  }
  c10::NoGradGuard no_grad;
  for (const NamedTensor& item : state) {
    const at::Tensor value = weights.at(item.name);
    if (!value.sizes().equals(item.tensor.sizes())) {
      throw ConfigError("the weights '" + path + "' hold '" + item.name + "' of shape " + ShapeText(value) +
                        ", but this model's is " + ShapeText(item.tensor) + " (" + model.Describe() + "); " +
                        mismatch_fix);
    }
    item.tensor.copy_(value);
  }
}

}  // namespace ct
