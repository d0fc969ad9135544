#include "data/shard_loader.h"

#include "data/h5_file.h"
#include "data/sharding.h"
#include "util/error.h"

namespace ct {

namespace {

// One check at load time, so that a NaN in the file is reported as such and not as a diverged
// loss epochs later. rows: this rank's [first, first + rows.size(0)).
void CheckFinite(const at::Tensor& rows, int64_t first, const std::string& path, const std::string& key) {
  at::Tensor bad_rows = (~at::isfinite(rows)).reshape({rows.size(0), -1}).any(/*dim=*/1).nonzero();
  if (bad_rows.numel() == 0) return;
  throw DataError("'" + path + "': dataset '" + key + "' has NaN or Inf values, first in row " +
                  std::to_string(first + bad_rows[0][0].item<int64_t>()) + " (" + std::to_string(bad_rows.size(0)) +
                  " bad rows among rows " + std::to_string(first) + "-" + std::to_string(first + rows.size(0) - 1) +
                  "); clean or drop those rows");
}

}  // namespace

ShardLoader ShardLoader::Load(const std::string& path, const std::string& input_key, const std::string& target_key,
                              MPI_Comm comm, const c10::Device& device) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  at::Tensor input, target;
  int64_t total_rows = 0;
  RowRange slice;
  {
    // Collective from open to close. What can fail here fails on every rank alike (the file's
    // metadata), so no rank leaves a collective its peers are still in.
    ParallelH5File file(path, ParallelH5File::Mode::kRead, comm);
    const RowShape input_shape = file.FloatRows(input_key);
    const RowShape target_shape = file.FloatRows(target_key);
    if (input_shape.Rows() != target_shape.Rows()) {
      throw DataError("'" + path + "': dataset '" + input_key + "' has " + std::to_string(input_shape.Rows()) +
                      " rows but '" + target_key + "' has " + std::to_string(target_shape.Rows()) +
                      "; input and target must pair row by row");
    }
    if (input_shape.Rows() == 0) {
      throw DataError("'" + path + "': dataset '" + input_key + "' has no rows");
    }
    total_rows = input_shape.Rows();
    slice = RankSlice(total_rows, size, rank);
    auto read = [&](const std::string& key, const RowShape& shape) {
      std::vector<int64_t> dims = shape.dims;
      dims[0] = slice.Size();
      at::Tensor host = at::empty(dims, at::kFloat);
      file.ReadRows(key, slice.begin, slice.Size(), host.data_ptr<float>());
      return host;
    };
    input = read(input_key, input_shape);
    target = read(target_key, target_shape);
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

}  // namespace ct
