// Named batch fields (data.fields) travel together: every field of a row, each with its own row
// shape and dataset name, stays with its row through static sharding, shuffled batches, the
// data.val_fraction split, block streaming over several files and replicated sharding. The files'
// rows say which row they are: a = [i, i, i], b = [[-i, -i], [-i, -i]], c = 2i.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <numeric>

#include "data/block_stream.h"
#include "data/dataset_files.h"
#include "data/shard_loader.h"
#include "mpi/mpi_test_world.h"

namespace ct {
namespace {

constexpr int64_t kFieldRows = 1001;
const std::vector<DataField> kFields = {{"x", "a"}, {"y", "b"}, {"z", "c"}};

// Collective: rows [first, first + rows) of the three datasets into `path`.
void WriteFields(const std::string& path, int64_t first, int64_t rows) {
  ParallelH5File file(path, ParallelH5File::Mode::kCreate, MPI_COMM_WORLD);
  file.CreateFloatRows("a", {rows, 3});
  file.CreateFloatRows("b", {rows, 2, 2});
  file.CreateFloatRows("c", {rows});
  const auto& world = test::World();
  const int64_t begin = rows * world.Rank() / world.Size(), end = rows * (world.Rank() + 1) / world.Size();
  const std::vector<std::pair<const char*, std::pair<int64_t, float>>> layout = {
      {"a", {3, 1.0f}}, {"b", {4, -1.0f}}, {"c", {1, 2.0f}}};
  for (const auto& [name, shape] : layout) {
    const auto [width, scale] = shape;
    file.WriteRows(name, begin, end - begin, [&, width = width, scale = scale](int64_t row, int64_t n, float* out) {
      for (int64_t i = 0; i < n * width; ++i) out[i] = scale * static_cast<float>(first + row + i / width);
    });
  }
}

class DataFields : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = test::SharedTempPath("fields");
    if (test::World().Rank() == 0) std::filesystem::create_directories(dir_);
    MPI_Barrier(MPI_COMM_WORLD);
    WriteFields(dir_ + "/part-0.h5", 0, 600);
    WriteFields(dir_ + "/part-1.h5", 600, kFieldRows - 600);
    files_ = OpenDatasetFiles("data.train", {dir_ + "/part-*.h5"}, kFields, MPI_COMM_WORLD);
  }
  void TearDown() override {
    MPI_Barrier(MPI_COMM_WORLD);
    if (test::World().Rank() == 0) std::filesystem::remove_all(dir_);
  }
  std::string dir_;
  DatasetFiles files_;
};

// The row numbers a batch holds, or -1 where a row's fields disagree (or a field is misshapen).
std::vector<int64_t> RowsOf(const Batch& batch) {
  std::vector<int64_t> rows;
  const at::Tensor x = batch["x"], y = batch["y"], z = batch["z"];
  const bool shaped = batch.names == std::vector<std::string>{"x", "y", "z"} && x.dim() == 2 && x.size(1) == 3 &&
                      y.dim() == 3 && y.size(1) == 2 && y.size(2) == 2 && z.dim() == 1;
  for (int64_t i = 0; i < batch.Rows(); ++i) {
    const auto row = static_cast<int64_t>(x[i][0].item<float>());
    const bool same = shaped && at::equal(x[i], at::full({3}, static_cast<float>(row))) &&
                      at::equal(y[i], at::full({2, 2}, -static_cast<float>(row))) &&
                      z[i].item<float>() == 2.0f * static_cast<float>(row);
    rows.push_back(same ? row : -1);
  }
  return rows;
}

TEST_F(DataFields, SchemaListsEveryFieldWithItsShapeAcrossFiles) {
  ASSERT_EQ(files_.schema.fields.size(), 3u);
  EXPECT_EQ(files_.schema.Rows(), kFieldRows);
  EXPECT_EQ(files_.schema.RowBytes(), 4 * (3 + 4 + 1));
  const std::vector<FieldDims> dims = files_.schema.Dims();
  EXPECT_EQ(dims[1].name, "y");
  EXPECT_EQ(dims[1].dims, (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(DescribeFields(dims), "'x' [3], 'y' [2, 2], 'z' []");
}

TEST_F(DataFields, StaticShardsAndShuffledBatchesKeepEveryRowTogether) {
  const auto& world = test::World();
  ShardLoader rows = ShardLoader::Load(files_, MPI_COMM_WORLD, c10::Device(c10::kCPU));
  const RowRange mine = RankSlice(kFieldRows, world.Size(), world.Rank());
  std::vector<int64_t> expected(static_cast<size_t>(mine.Size()));
  std::iota(expected.begin(), expected.end(), mine.begin);
  bool ok = RowsOf(rows.Rows(0, rows.Rows())) == expected;
  StaticBatches batches(std::move(rows), 16, 5, world.Size(), world.Rank());
  batches.StartEpoch(1, 0);
  for (int64_t b = 0; b < batches.BatchesPerEpoch(); ++b) {
    for (int64_t row : RowsOf(batches.Next())) ok = ok && row >= mine.begin && row < mine.end;
  }
  EXPECT_TRUE(test::AllRanksAgree(ok));
}

TEST_F(DataFields, TheValidationTailKeepsEveryRowTogether) {
  const ShardLoader val =
      ShardLoader::Load(files_, MPI_COMM_WORLD, c10::Device(c10::kCPU), 0.1, FilePart::kValidationTail);
  bool ok = val.TotalRows() == ValidationRows(kFieldRows, 0.1);
  for (int64_t row : RowsOf(val.Rows(0, val.Rows()))) ok = ok && row >= kFieldRows - val.TotalRows();
  EXPECT_TRUE(test::AllRanksAgree(ok));
}

TEST_F(DataFields, BlockStreamingOverTwoFilesKeepsEveryRowTogether) {
  const auto& world = test::World();
  BlockStreamOptions o;
  o.files = files_;
  o.schema = files_.schema;
  o.block_rows = 50;  // blocks 550-599 and 600-649 end and start a file
  o.window_blocks = 3;
  o.batch = 8;
  o.seed = 7;
  o.world_size = world.Size();
  o.rank = world.Rank();
  BlockStream stream(o);
  stream.StartEpoch(0, 0);
  std::vector<int64_t> got;
  for (int64_t b = 0; b < stream.BatchesPerEpoch(); ++b) {
    for (int64_t row : RowsOf(stream.Next())) got.push_back(row);
  }
  std::vector<int64_t> expected = EpochBlockRowOrder(BlockPlan{kFieldRows, 50}, world.Size(), world.Rank(), 7, 0, 3);
  expected.resize(got.size());
  EXPECT_TRUE(test::AllRanksAgree(got == expected));
}

// data.sharding=replicated: rank r's batch s is part r of the one-rank run's batch s of W x B rows.
TEST_F(DataFields, ReplicatedBatchesAreTheOneRankBatchesSplitOverRanks) {
  const auto& world = test::World();
  const c10::Device cpu(c10::kCPU);
  StaticBatches mine(ShardLoader::Load(files_, MPI_COMM_SELF, cpu), 10, 3, world.Size(), world.Rank(), true);
  StaticBatches alone(ShardLoader::Load(files_, MPI_COMM_SELF, cpu), 10 * world.Size(), 3, 1, 0, true);
  bool ok = mine.BatchesPerEpoch() == alone.BatchesPerEpoch();
  mine.StartEpoch(2, 0);
  alone.StartEpoch(2, 0);
  for (int64_t s = 0; s < mine.BatchesPerEpoch(); ++s) {
    const std::vector<int64_t> part = RowsOf(mine.Next()), whole = RowsOf(alone.Next());
    ok = ok && std::equal(part.begin(), part.end(), whole.begin() + 10 * world.Rank()) &&
         std::find(part.begin(), part.end(), -1) == part.end();
  }
  EXPECT_TRUE(test::AllRanksAgree(ok));
}

}  // namespace
}  // namespace ct
