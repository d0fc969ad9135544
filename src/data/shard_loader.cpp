#include "data/shard_loader.h"

#include <spdlog/spdlog.h>

#include "data/dataset_schema.h"
#include "data/h5_file.h"
#include "data/sharding.h"
#include "util/error.h"

namespace ct {

namespace {

// One check at load time, so that a NaN in the file is reported as such and not as a diverged
// loss epochs later. rows: this rank's [first, first + rows.size(0)).
void CheckFinite(const at::Tensor& rows, int64_t first, const std::string& path, const std::string& key) {
  if (rows.numel() == 0) return;  // a rank with no rows (fewer rows than ranks)
  at::Tensor bad_rows = (~at::isfinite(rows)).reshape({rows.size(0), -1}).any(/*dim=*/1).nonzero();
  if (bad_rows.numel() == 0) return;
  throw DataError("'" + path + "': dataset '" + key + "' has NaN or Inf values, first in row " +
                  std::to_string(first + bad_rows[0][0].item<int64_t>()) + " (" + std::to_string(bad_rows.size(0)) +
                  " bad rows among rows " + std::to_string(first) + "-" + std::to_string(first + rows.size(0) - 1) +
                  "); clean or drop those rows");
}

}  // namespace

ShardLoader ShardLoader::Load(const std::string& path, const std::string& input_key, const std::string& target_key,
                              MPI_Comm comm, const c10::Device& device, double val_fraction, FilePart part) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  at::Tensor input, target;
  int64_t total_rows = 0;
  RowRange slice;
  // rows [slice) of `key` from `file` into a new host tensor.
  auto read = [&](const ParallelH5File& file, const std::string& key, const RowShape& shape) {
    std::vector<int64_t> dims = shape.dims;
    dims[0] = slice.Size();
    at::Tensor host = at::empty(dims, at::kFloat);
    file.ReadRows(key, slice.begin, slice.Size(), host.data_ptr<float>());
    return host;
  };
  DatasetSchema schema;
  bool is_virtual = false;
  {
    // Collective from open to close. What can fail here fails on every rank alike (the file's
    // metadata), so no rank leaves a collective its peers are still in.
    ParallelH5File file(path, ParallelH5File::Mode::kRead, comm);
    schema = ReadSchema(file, input_key, target_key);
    const std::string conversion = ConversionNote(schema, path, input_key, target_key);
    if (rank == 0 && !conversion.empty()) spdlog::info("data: {}", conversion);
    const RowRange rows = PartOf(schema.Rows(), val_fraction, part);
    if (rows.Size() < 1) {
      throw DataError("'" + path + "' has " + std::to_string(schema.Rows()) + " rows: too few to set aside " +
                      std::to_string(ValidationRows(schema.Rows(), val_fraction)) +
                      " for validation (data.val_fraction) and train on the rest; lower data.val_fraction or give "
                      "data.val");
    }
    total_rows = rows.Size();
    slice = RankSlice(total_rows, size, rank);
    slice = {slice.begin + rows.begin, slice.end + rows.begin};  // rows of the file
    // Parallel HDF5 cannot read a virtual dataset collectively: each rank reads its rows itself.
    is_virtual = file.IsVirtual(input_key) || file.IsVirtual(target_key);
    if (!is_virtual) {
      input = read(file, input_key, schema.input);
      target = read(file, target_key, schema.target);
      if (file.IndependentFallbackCause() != 0 && rank == 0) {
        spdlog::warn(
            "reading '{}': HDF5 fell back from collective to independent I/O (H5D_MPIO cause bits {:#x}); "
            "reads still work, but slower on a parallel file system",
            path, file.IndependentFallbackCause());
      }
    }
  }
  if (is_virtual) {
    const ParallelH5File own(path, ParallelH5File::Mode::kRead, MPI_COMM_NULL);
    input = read(own, input_key, schema.input);
    target = read(own, target_key, schema.target);
  }
  // This rank's rows alone: after the collective part, since it can fail on some ranks only.
  CheckFinite(input, slice.begin, path, input_key);
  CheckFinite(target, slice.begin, path, target_key);
  return ShardLoader(input.to(device), target.to(device), total_rows);
}

ShardLoader::ShardLoader(at::Tensor input, at::Tensor target, int64_t total_rows)
    : input_(std::move(input)), target_(std::move(target)), total_rows_(total_rows) {
  order_ = at::arange(Rows(), at::TensorOptions().dtype(at::kLong).device(input_.device()));
}

void ShardLoader::Shuffle(uint64_t seed, int64_t epoch, int rank) {
  std::vector<int64_t> order = EpochPermutation(Rows(), seed, epoch, rank);
  order_ = at::from_blob(order.data(), {Rows()}, at::kLong).to(input_.device(), /*non_blocking=*/false, /*copy=*/true);
}

Batch ShardLoader::ShuffledBatch(int64_t step, int64_t batch) const {
  const at::Tensor index = order_.narrow(0, step * batch, batch);
  return {input_.index_select(0, index), target_.index_select(0, index)};
}

Batch ShardLoader::Rows(int64_t begin, int64_t count) const {
  return {input_.narrow(0, begin, count), target_.narrow(0, begin, count)};
}

int64_t TrainBatches::RowLength() const {
  int64_t n = 1;
  for (int64_t d : RowDims()) n *= d;
  return n;
}

StaticBatches::StaticBatches(ShardLoader rows, int64_t batch, uint64_t seed, int world_size, int rank)
    : rows_(std::move(rows)),
      batch_(batch),
      seed_(seed),
      rank_(rank),
      batches_(StepsPerEpoch(rows_.TotalRows(), world_size, batch)) {}

std::string StaticBatches::Describe() const {
  return "static: " + std::to_string(rows_.Rows()) + " rows (" + std::to_string(rows_.Bytes() >> 20) +
         " MiB) in memory on each rank, reshuffled every epoch";
}

void StaticBatches::StartEpoch(int64_t epoch, int64_t first_batch) {
  rows_.Shuffle(seed_, epoch, rank_);
  next_ = first_batch;
}

}  // namespace ct
