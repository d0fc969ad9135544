#include "train/predict.h"

#include <c10/core/GradMode.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <optional>

#include "cluster/agree.h"
#include "cluster/mpi_check.h"
#include "cluster/placement.h"
#include "data/h5_file.h"
#include "data/sharding.h"
#include "model/forward.h"
#include "model/make_model.h"
#include "train/checkpoint.h"
#include "util/atomic_file.h"
#include "util/config.h"
#include "util/error.h"

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

// The input file (open on every rank), its rows' shape, and the checkpoint's model.
struct PredictInput {
  std::optional<ParallelH5File> file;
  RowShape rows;
  std::unique_ptr<Model> model;
};

// Collective, agreed: opens the input and rebuilds the model from the checkpoint's weights.
PredictInput OpenInputAndModel(const PredictOptions& o, const Config& config, const MpiWorld& world) {
  PredictInput in;
  const std::string& key = config.data.input_key;
  ParallelH5File::SetMpiIoHints(config.data.mpi_hints);
  RunAgreed(world, [&] {
    in.file.emplace(o.data, ParallelH5File::Mode::kRead, world.Comm());
    in.rows = in.file->FloatRows(key);
    if (in.rows.Rows() == 0) throw DataError("'" + o.data + "': dataset '" + key + "' has no rows");
    const std::vector<int64_t> input_dims(in.rows.dims.begin() + 1, in.rows.dims.end());
    // The target's shape, when the file has one, for models whose output differs from the input.
    std::vector<int64_t> target_dims = input_dims;
    if (in.file->HasDataset(config.data.target_key)) {
      const RowShape target = in.file->FloatRows(config.data.target_key);
      target_dims.assign(target.dims.begin() + 1, target.dims.end());
    }
    in.model = MakeModel(config.model, input_dims, target_dims);
    LoadCheckpointModel(o.checkpoint, *in.model, c10::Device(c10::kCPU),
                        "give predict rows shaped like the training rows (here '" + o.data + "' '" + key + "' " +
                            in.rows.Str() + ") and leave the model.* settings as they were");
  });
  return in;
}

// Collective: every rank writes its slice of recon (and mu) into `path`, piece by piece, the
// same number of collective writes on every rank (some with no rows). Returns the datasets'
// shapes for the log: "recon [N, L], mu [N, 16]".
std::string WritePredictions(const std::string& path, PredictInput& in, const PredictOptions& o, const Config& config,
                             const MpiWorld& world, const c10::Device& device) {
  const std::vector<int64_t> row_dims(in.rows.dims.begin() + 1, in.rows.dims.end());
  auto forward = [&](const at::Tensor& x) {  // x: [B, ...] on the host -> float32 on the host
    VaeOutput out = ForwardPass(*in.model, x.to(device), config.train.precision);
    out.recon = out.recon.to(at::kFloat).cpu().contiguous();
    if (out.mu.defined()) out.mu = out.mu.to(at::kFloat).cpu().contiguous();
    return out;
  };
  // One zero row tells every rank alike which datasets to create and their shapes.
  const VaeOutput probe = forward(at::zeros(WithRows(1, row_dims)));
  const std::vector<int64_t> recon_dims(probe.recon.sizes().begin() + 1, probe.recon.sizes().end());
  ParallelH5File out(path, ParallelH5File::Mode::kCreate, world.Comm());
  out.CreateFloatRows("recon", WithRows(in.rows.Rows(), recon_dims));
  if (probe.mu.defined()) out.CreateFloatRows("mu", {in.rows.Rows(), probe.mu.size(1)});
  out.WriteAttribute("generator", "clustertrain predict");
  out.WriteAttribute("checkpoint", o.checkpoint);
  out.WriteAttribute("model", in.model->Fingerprint());
  out.WriteAttribute("data", o.data);

  const RowRange slice = RankSlice(in.rows.Rows(), world.Size(), world.Rank());
  int64_t pieces = (slice.Size() + o.batch - 1) / o.batch;
  MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &pieces, 1, MPI_INT64_T, MPI_MAX, world.Comm()));
  for (int64_t p = 0; p < pieces; ++p) {
    const int64_t begin = std::min(slice.begin + p * o.batch, slice.end);
    const int64_t rows = std::min(o.batch, slice.end - begin);
    at::Tensor x = at::empty(WithRows(rows, row_dims));
    in.file->ReadRows(config.data.input_key, begin, rows, x.data_ptr<float>());
    const VaeOutput y = rows > 0 ? forward(x) : VaeOutput{};
    out.WriteRows("recon", begin, rows, CopyRows(y.recon, begin));
    if (probe.mu.defined()) out.WriteRows("mu", begin, rows, CopyRows(y.mu, begin));
    if (world.Rank() == 0 && pieces > 1 && (p + 1) % std::max<int64_t>(1, pieces / 10) == 0) {
      spdlog::info("predict: {:.0f}%", 100.0 * static_cast<double>(p + 1) / static_cast<double>(pieces));
    }
  }
  std::string shapes = "recon " + RowShape{WithRows(in.rows.Rows(), recon_dims)}.Str();
  if (probe.mu.defined())
    shapes += ", mu [" + std::to_string(in.rows.Rows()) + ", " + std::to_string(probe.mu.size(1)) + "]";
  return shapes;
}

}  // namespace

void RunPredict(const PredictOptions& o, const MpiWorld& world) {
  const auto start = std::chrono::steady_clock::now();
  const bool lead = world.Rank() == 0;
  Config config;
  RunAgreed(world, [&] {
    config = LoadConfigText(ReadCheckpointSummary(o.checkpoint).config_yaml,
                            "the config in checkpoint '" + o.checkpoint + "'", o.overrides);
  });
  const c10::Device device = PlaceThisRank(config, world).device;
  PredictInput in = OpenInputAndModel(o, config, world);
  in.model->To(device);
  in.model->SetTraining(false);
  c10::NoGradGuard no_grad;

  const std::string tmp = TemporaryPathFor(o.out);
  // Every rank closes the file before it is renamed. A failed write names the file and, where
  // that is why, the full disk (HDF5 over MPI-IO says only "file write failed").
  std::string written;
  RunAgreed(world, [&] {
    try {
      written = WritePredictions(tmp, in, o, config, world, device);
    } catch (const DataError& e) {
      if (lead) std::remove(tmp.c_str());
      const std::string full = DiskFullNote(o.out);
      throw DataError("predict: cannot write '" + o.out + "': " + (full.empty() ? std::string(e.what()) : full));
    }
  });
  world.Barrier();
  if (lead) CommitTemporaryFile(o.out);
  world.Barrier();
  if (lead) {
    spdlog::info("predict: wrote {} in {:.1f} s: {} for {} rows of '{}' ({})", o.out,
                 std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), written,
                 in.rows.Rows(), o.data, in.model->Describe());
  }
}

}  // namespace ct
