#include "train/predict.h"

#include <c10/core/GradMode.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <cstring>
#include <memory>
#include <optional>

#include "cluster/agree.h"
#include "cluster/mpi_check.h"
#include "cluster/placement.h"
#include "data/h5_file.h"
#include "data/sharding.h"
#include "model/make_model.h"
#include "model/precision.h"
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

}  // namespace

void RunPredict(const PredictOptions& o, const MpiWorld& world) {
  const auto start = std::chrono::steady_clock::now();
  const bool lead = world.Rank() == 0;
  Config config;
  RunAgreed(world, [&] {
    config = LoadConfigText(CheckpointConfigYaml(o.checkpoint), "the config in checkpoint '" + o.checkpoint + "'",
                            o.overrides);
  });
  const c10::Device device = PlaceThisRank(config, world).device;
  const std::string& key = config.data.input_key;

  std::optional<ParallelH5File> opened;
  RowShape input;
  std::vector<int64_t> target_dims;
  std::unique_ptr<Model> model;
  RunAgreed(world, [&] {
    opened.emplace(o.data, ParallelH5File::Mode::kRead, world.Comm());
    const ParallelH5File& in = *opened;
    input = in.FloatRows(key);
    if (input.Rows() == 0) throw DataError("'" + o.data + "': dataset '" + key + "' has no rows");
    const std::vector<int64_t> input_dims(input.dims.begin() + 1, input.dims.end());
    target_dims = input_dims;  // the target's shape, when the file has one, for models that differ
    if (in.HasDataset(config.data.target_key)) {
      const RowShape target = in.FloatRows(config.data.target_key);
      target_dims.assign(target.dims.begin() + 1, target.dims.end());
    }
    model = MakeModel(config.model, input_dims, target_dims);
    LoadCheckpointModel(o.checkpoint, *model, c10::Device(c10::kCPU),
                        "give predict rows shaped like the training rows (here '" + o.data + "' '" + key + "' " +
                            input.Str() + ") and leave the model.* settings as they were");
  });
  const ParallelH5File& in = *opened;
  model->To(device);
  model->SetTraining(false);
  c10::NoGradGuard no_grad;
  const bool bf16 = config.train.precision == "bf16";
  auto forward = [&](const at::Tensor& x) {
    const AutocastScope autocast(bf16, device.type());
    VaeOutput out = model->Forward(x.to(device));
    out.recon = out.recon.to(at::kFloat).cpu().contiguous();
    if (out.mu.defined()) out.mu = out.mu.to(at::kFloat).cpu().contiguous();
    return out;
  };
  // One zero row tells every rank alike which datasets to create and their shapes.
  const VaeOutput probe = forward(at::zeros(WithRows(1, std::vector<int64_t>(input.dims.begin() + 1, input.dims.end()))));
  const std::vector<int64_t> recon_dims(probe.recon.sizes().begin() + 1, probe.recon.sizes().end());

  const std::string tmp = TemporaryPathFor(o.out);
  {
    ParallelH5File out(tmp, ParallelH5File::Mode::kCreate, world.Comm());
    out.CreateFloatRows("recon", WithRows(input.Rows(), recon_dims));
    if (probe.mu.defined()) out.CreateFloatRows("mu", {input.Rows(), probe.mu.size(1)});
    out.WriteAttribute("generator", "clustertrain predict");
    out.WriteAttribute("checkpoint", o.checkpoint);
    out.WriteAttribute("model", model->Fingerprint());
    out.WriteAttribute("data", o.data);

    const RowRange slice = RankSlice(input.Rows(), world.Size(), world.Rank());
    int64_t pieces = (slice.Size() + o.batch - 1) / o.batch;
    MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &pieces, 1, MPI_INT64_T, MPI_MAX, world.Comm()));
    for (int64_t p = 0; p < pieces; ++p) {  // the same collectives on every rank, some with no rows
      const int64_t begin = std::min(slice.begin + p * o.batch, slice.end);
      const int64_t rows = std::min(o.batch, slice.end - begin);
      at::Tensor x = at::empty(WithRows(rows, std::vector<int64_t>(input.dims.begin() + 1, input.dims.end())));
      in.ReadRows(key, begin, rows, x.data_ptr<float>());
      const VaeOutput y = rows > 0 ? forward(x) : VaeOutput{};
      out.WriteRows("recon", begin, rows, CopyRows(y.recon, begin));
      if (probe.mu.defined()) out.WriteRows("mu", begin, rows, CopyRows(y.mu, begin));
      if (lead && pieces > 1 && (p + 1) % std::max<int64_t>(1, pieces / 10) == 0) {
        spdlog::info("predict: {:.0f}%", 100.0 * static_cast<double>(p + 1) / static_cast<double>(pieces));
      }
    }
  }  // every rank closes the file before it is renamed
  MPI_CHECK(MPI_Barrier(world.Comm()));
  if (lead) CommitTemporaryFile(o.out);
  MPI_CHECK(MPI_Barrier(world.Comm()));
  if (lead) {
    spdlog::info("predict: wrote {} in {:.1f} s: recon {}{} for {} rows of '{}' ({})", o.out,
                 std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(),
                 RowShape{WithRows(input.Rows(), recon_dims)}.Str(),
                 probe.mu.defined() ? ", mu [" + std::to_string(input.Rows()) + ", " + std::to_string(probe.mu.size(1)) + "]"
                                    : std::string(),
                 input.Rows(), o.data, model->Describe());
  }
}

}  // namespace ct
