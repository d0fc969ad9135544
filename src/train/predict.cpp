#include "train/predict.h"

#include <c10/core/GradMode.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <optional>

#include "cluster/agree.h"
#include "cluster/placement.h"
#include "data/dataset_schema.h"
#include "data/h5_file.h"
#include "data/sharding.h"
#include "model/forward.h"
#include "model/make_model.h"
#include "train/checkpoint.h"
#include "train/model_source.h"
#include "util/atomic_file.h"
#include "util/config.h"
#include "util/error.h"
#include "util/unfinished_file.h"

namespace ct {
namespace {

std::vector<int64_t> WithRows(int64_t rows, std::vector<int64_t> dims) {
  dims.insert(dims.begin(), rows);
  return dims;
}

// Copies rows [first, first + n) of the piece that starts at row `begin` out of `values`.
ParallelH5File::Fill CopyRows(const at::Tensor& values, int64_t begin) {
  return [values, begin](int64_t first, int64_t n, float* buffer) {
    const int64_t row = values.numel() / std::max<int64_t>(values.size(0), 1);
    std::memcpy(buffer, values.data_ptr<float>() + (first - begin) * row, static_cast<size_t>(n * row) * sizeof(float));
  };
}

// A rank's part of a collective write when it has no rows left.
void NoRows(int64_t /*first*/, int64_t /*rows*/, float* /*buffer*/) {}

// The input file (open on every rank), the fields of data.fields it holds, and the checkpoint's
// model.
struct PredictInput {
  std::optional<ParallelH5File> file;
  std::vector<FieldRows> fields;  // those of data.fields that the file has, in that order
  int64_t rows = 0;
  std::unique_ptr<Model> model;
};

// Collective, agreed: opens the input and rebuilds the model from the checkpoint's weights. The
// field `target`, when the file lacks it, is left out of the batch (a VAE then computes no loss);
// every other field of data.fields must be there.
PredictInput OpenInputAndModel(const PredictOptions& o, const Config& config, const ModelSource& source,
                               const MpiWorld& world) {
  PredictInput in;
  ParallelH5File::SetMpiIoHints(config.data.mpi_hints);
  RunAgreed(world, [&] {
    in.file.emplace(o.data, ParallelH5File::Mode::kRead, world.Comm());
    std::string wanted;
    for (const DataField& field : DataFields(config.data)) {
      wanted += (wanted.empty() ? "'" : ", '") + field.dataset + "'";
      // A VAE's target is optional here (its loss is not needed); every other field is read.
      if (field.name == "target" && !in.file->HasDataset(field.dataset)) continue;
      in.fields.push_back({field.name, field.dataset, in.file->FloatRows(field.dataset)});
      const FieldRows& added = in.fields.back();
      if (added.shape.Rows() != in.fields[0].shape.Rows()) {
        throw DataError("'" + o.data + "': dataset '" + added.dataset + "' has " + std::to_string(added.shape.Rows()) +
                        " rows but '" + in.fields[0].dataset + "' has " + std::to_string(in.fields[0].shape.Rows()) +
                        "; the fields must pair row by row");
      }
    }
    if (in.fields.empty()) {
      throw DataError("'" + o.data + "' holds none of the datasets the model reads (" + wanted +
                      "); `clustertrain info " + o.data +
                      "` lists its datasets; --set data.fields=... or "
                      "data.input_key=... maps them");
    }
    in.rows = in.fields[0].shape.Rows();
    if (in.rows == 0) throw DataError("'" + o.data + "': dataset '" + in.fields[0].dataset + "' has no rows");
    DatasetSchema schema;
    schema.fields = in.fields;
    in.model = MakeModel(config.model, schema.Dims());
    const std::string fix = "give predict rows shaped like the training rows (here '" + o.data + "' " +
                            DescribeFields(schema.Dims()) + ") and leave the model.* settings as they were";
    if (source.weights) {
      LoadWeights(*source.weights, *in.model, o.checkpoint, fix);
    } else {
      LoadCheckpointModel(o.checkpoint, *in.model, c10::Device(c10::kCPU), fix);
    }
  });
  return in;
}

// Rows [begin, begin + rows) of every field, read collectively (rows may be 0).
Batch ReadBatch(const PredictInput& in, int64_t begin, int64_t rows) {
  Batch batch;
  for (const FieldRows& field : in.fields) {
    batch.names.push_back(field.name);
    batch.tensors.push_back(at::empty(WithRows(rows, {field.shape.dims.begin() + 1, field.shape.dims.end()})));
    in.file->ReadRows(field.dataset, begin, rows, batch.tensors.back().data_ptr<float>());
  }
  return batch;
}

// Collective: every rank writes its slice of each of the model's outputs (recon, mu and logvar
// for a VAE; a dict model's batched entries) into `path`, piece by piece, the same number of
// collective writes on every rank (some with no rows). Returns the datasets' shapes for the
// log: "recon [N, L], mu [N, 16]".
std::string WritePredictions(const std::string& path, PredictInput& in, const PredictOptions& o, const Config& config,
                             const MpiWorld& world, const c10::Device& device) {
  auto forward = [&](const Batch& batch) {  // on the host -> float32 outputs on the host
    ModelOutput out =
        in.model->Forward(batch.Map([&](const at::Tensor& t) { return t.to(device); }), config.train.precision);
    for (at::Tensor& t : out.outputs) t = t.to(at::kFloat).cpu().contiguous();
    return out;
  };
  // Two zero rows tell every rank alike which datasets to create and their shapes.
  Batch zeros;
  for (const FieldRows& field : in.fields) {
    zeros.names.push_back(field.name);
    zeros.tensors.push_back(at::zeros(WithRows(2, {field.shape.dims.begin() + 1, field.shape.dims.end()})));
  }
  const ModelOutput probe = forward(zeros);
  if (probe.outputs.empty()) {
    throw ConfigError(
        "predict: the model returns no batched outputs (entries whose first dimension is the batch's "
        "rows), so there is nothing to write; return the predictions from forward");
  }
  ParallelH5File out(path, ParallelH5File::Mode::kCreate, world.Comm());
  std::string shapes;
  for (size_t i = 0; i < probe.outputs.size(); ++i) {
    const std::vector<int64_t> dims = WithRows(in.rows, probe.outputs[i].sizes().slice(1).vec());
    out.CreateFloatRows(probe.output_names[i], dims);
    shapes += (shapes.empty() ? "" : ", ") + probe.output_names[i] + " " + RowShape{dims}.Str();
  }
  out.WriteAttribute("generator", "clustertrain predict");
  out.WriteAttribute("checkpoint", o.checkpoint);
  out.WriteAttribute("model", in.model->Fingerprint());
  out.WriteAttribute("data", o.data);

  const RowRange slice = RankSlice(in.rows, world.Size(), world.Rank());
  const int64_t pieces = world.MaxOverRanks((slice.Size() + o.batch - 1) / o.batch);
  for (int64_t p = 0; p < pieces; ++p) {
    const int64_t begin = std::min(slice.begin + p * o.batch, slice.end);
    const int64_t rows = std::min(o.batch, slice.end - begin);
    const Batch batch = ReadBatch(in, begin, rows);
    const ModelOutput y = rows > 0 ? forward(batch) : ModelOutput{};
    for (size_t i = 0; i < probe.outputs.size(); ++i) {
      out.WriteRows(probe.output_names[i], begin, rows, rows > 0 ? CopyRows(y.outputs[i], begin) : NoRows);
    }
    if (world.Rank() == 0 && pieces > 1 && (p + 1) % std::max<int64_t>(1, pieces / 10) == 0) {
      spdlog::info("predict: {:.0f}%", 100.0 * static_cast<double>(p + 1) / static_cast<double>(pieces));
    }
  }
  out.Close();
  return shapes;
}

}  // namespace

void RunPredict(const PredictOptions& o, const MpiWorld& world) {
  const auto start = std::chrono::steady_clock::now();
  const bool lead = world.Rank() == 0;
  Config config;
  ModelSource source;
  RunAgreed(world, [&] {
    source = ReadModelSource(o.checkpoint);
    config = LoadConfigText(source.config_yaml, source.config_origin, o.overrides);
    // The module file the run trained is named by the run's config, not kept in the checkpoint.
    if (config.model.kind == ModelKind::kTorchScript && !std::filesystem::exists(config.model.path)) {
      throw ConfigError("model.path '" + config.model.path + "' (from " + source.config_origin +
                        ") does not exist: the TorchScript module the run trained has moved or gone; pass "
                        "--set model.path=WHERE_IT_IS_NOW");
    }
  });
  const c10::Device device = PlaceThisRank(config, world).device;
  PredictInput in = OpenInputAndModel(o, config, source, world);
  in.model->To(device);
  in.model->SetTraining(false);
  c10::NoGradGuard no_grad;

  const std::string tmp = TemporaryPathFor(o.out);
  const UnfinishedFile unfinished(tmp);  // until renamed: a stop signal removes it
  // Every rank closes the file before it is renamed. A failed write names the file and, where
  // that is why, the full disk (HDF5 over MPI-IO says only "file write failed").
  std::string written;
  RunAgreed(world, [&] {
    WriteTemporaryOrRemoveIt("predict", o.out, lead,
                             [&] { written = WritePredictions(tmp, in, o, config, world, device); });
  });
  world.Barrier();
  if (lead) CommitTemporaryFile(o.out);
  world.Barrier();
  if (lead) {
    spdlog::info("predict: wrote {} in {:.1f} s: {} for {} rows of '{}' ({})", o.out,
                 std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), written, in.rows,
                 o.data, in.model->Describe());
  }
}

}  // namespace ct
