// The one place that builds the model named by model.kind.
#pragma once

#include <memory>
#include <vector>

#include "data/batch.h"
#include "model/model.h"
#include "util/config.h"

namespace ct {

// fields: one row's shape per batch field ({"input", {L}} or {C, L}). Throws ConfigError when the
// model does not fit the rows (vae_mlp on rows of another shape than the target's, a field the
// model needs that data.fields lacks).
std::unique_ptr<Model> MakeModel(const ModelConfig& config, const std::vector<FieldDims>& fields);

// A built-in model's checks of the rows alone (before anything is sized by them): ConfigError
// where the model cannot train on them, naming the fix; returns the input rows' shape.
std::vector<int64_t> CheckRowsFitModel(const ModelConfig& config, const std::vector<FieldDims>& fields);

// The shape of field `name` ({L}), or ConfigError saying that model.kind `kind` needs it.
std::vector<int64_t> FieldShape(const std::vector<FieldDims>& fields, const std::string& name, const char* kind);

}  // namespace ct
