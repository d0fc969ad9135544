// The block-streaming loader serves exactly the rows block sharding assigns, paired input to
// target, in the order EpochBlockRowOrder defines; resumes inside an epoch; and reports a file
// that vanishes or is truncated while training.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <numeric>

#include "data/block_stream.h"
#include "data/dataset_files.h"
#include "mpi/indexed_rows.h"
#include "mpi/mpi_test_world.h"
#include "util/error.h"

namespace ct {
namespace {

constexpr int64_t kRows = 1001;
constexpr int64_t kRowLength = 8;

void WriteIndexedRows(const std::string& path, MPI_Comm comm) {
  test::WriteIndexedRows(path, comm, 0, kRows, kRowLength);
}

std::string PathFor(const char* name, bool per_rank) {
  const std::string rank = per_rank ? "r" + std::to_string(test::World().Rank()) + "_" : "";
  return test::SharedTempPath("blocks_" + rank + name);
}

// `path` as a dataset of one file, opened by this process alone.
DatasetFiles OneFile(const std::string& path) {
  return OpenDatasetFiles("the file", {path}, {{"input", "input"}, {"target", "target"}}, MPI_COMM_SELF);
}

BlockStreamOptions Options(const DatasetFiles& files, int world_size, int rank) {
  BlockStreamOptions o;
  o.files = files;
  o.schema = files.schema;
  o.block_rows = 16;
  o.window_blocks = 4;
  o.prefetch = 2;
  o.batch = 10;
  o.seed = 99;
  o.world_size = world_size;
  o.rank = rank;
  return o;
}

// The rows of the next `batches` batches; false in `paired` if a target row is not -input.
std::vector<int64_t> TakeRows(BlockStream& stream, int64_t batches, bool& paired) {
  std::vector<int64_t> rows;
  for (int64_t b = 0; b < batches; ++b) {
    Batch batch = stream.Next();
    paired = paired && batch["input"].size(0) == 10 && at::equal(batch["input"], -batch["target"]) &&
             at::equal(batch["input"], batch["input"].select(1, 0).unsqueeze(1).expand({10, kRowLength}));
    for (int64_t i = 0; i < 10; ++i) rows.push_back(static_cast<int64_t>(batch["input"][i][0].item<float>()));
  }
  return rows;
}

// This rank's rows of `epoch` (all `batches` batches); `ok` stays true only if they are paired
// and in the order EpochBlockRowOrder defines for kRows rows in blocks of 16.
std::vector<int64_t> EpochRows(BlockStream& stream, int64_t epoch, int64_t batches, bool& ok) {
  const auto& world = test::World();
  stream.StartEpoch(epoch, 0);
  bool paired = true;
  const std::vector<int64_t> rows = TakeRows(stream, batches, paired);
  std::vector<int64_t> expected = EpochBlockRowOrder(BlockPlan{kRows, 16}, world.Size(), world.Rank(), 99, epoch, 4);
  expected.resize(static_cast<size_t>(batches * 10));
  ok = ok && paired && rows == expected;
  return rows;
}

TEST(BlockStream, ServesItsBlocksRowsInTheShardingOrderDisjointFromOtherRanks) {
  const auto& world = test::World();
  const std::string path = PathFor("rows.h5", false);
  WriteIndexedRows(path, MPI_COMM_WORLD);
  BlockStream stream(Options(OneFile(path), world.Size(), world.Rank()));
  const int64_t batches = stream.BatchesPerEpoch();
  EXPECT_EQ(batches, BlockStepsPerEpoch(BlockPlan{kRows, 16}, world.Size(), 10));
  bool ok = batches > 0;
  for (int64_t epoch = 0; epoch < 2; ++epoch) {
    const std::vector<int64_t> rows = EpochRows(stream, epoch, batches, ok);
    // No row on two ranks.
    std::vector<int> counts(static_cast<size_t>(kRows), 0);
    for (int64_t row : rows) counts[static_cast<size_t>(row)] += 1;
    MPI_Allreduce(MPI_IN_PLACE, counts.data(), static_cast<int>(kRows), MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    ok = ok && std::all_of(counts.begin(), counts.end(), [](int c) { return c <= 1; });
  }
  EXPECT_TRUE(test::AllRanksAgree(ok));
  MPI_Barrier(MPI_COMM_WORLD);
  if (world.Rank() == 0) std::filesystem::remove(path);
}

// The rows of kRows split over six files (one of a single row, more files than the reader keeps
// open): blocks span files, and the stream serves exactly the one-file stream's rows.
TEST(BlockStream, ServesTheSameRowsWhenTheyAreSplitOverManyFiles) {
  const auto& world = test::World();
  const std::string dir = PathFor("bank", false);
  if (world.Rank() == 0) std::filesystem::create_directory(dir);
  MPI_Barrier(MPI_COMM_WORLD);
  const std::vector<int64_t> sizes = {300, 1, 100, 200, 150, 250};
  int64_t first = 0;
  for (size_t i = 0; i < sizes.size(); ++i) {
    test::WriteIndexedRows(dir + "/part-" + std::to_string(i) + ".h5", MPI_COMM_WORLD, first, sizes[i], kRowLength);
    first += sizes[i];
  }
  ASSERT_EQ(first, kRows);
  const DatasetFiles files =
      OpenDatasetFiles("data.train", {dir + "/part-*.h5"}, {{"input", "input"}, {"target", "target"}}, MPI_COMM_WORLD);
  BlockStream stream(Options(files, world.Size(), world.Rank()));
  const int64_t batches = stream.BatchesPerEpoch();
  bool ok = batches == BlockStepsPerEpoch(BlockPlan{kRows, 16}, world.Size(), 10) && files.paths.size() == 6;
  for (int64_t epoch = 0; epoch < 2; ++epoch) EpochRows(stream, epoch, batches, ok);
  EXPECT_TRUE(test::AllRanksAgree(ok));
  MPI_Barrier(MPI_COMM_WORLD);
  if (world.Rank() == 0) std::filesystem::remove_all(dir);
}

TEST(BlockStream, ResumesInsideAnEpochAndAbandonsAnUnfinishedOne) {
  const std::string path = PathFor("resume.h5", true);
  WriteIndexedRows(path, MPI_COMM_SELF);
  BlockStream stream(Options(OneFile(path), 1, 0));
  const int64_t batches = stream.BatchesPerEpoch();
  bool paired = true;
  stream.StartEpoch(3, 0);
  const std::vector<int64_t> whole = TakeRows(stream, batches, paired);
  stream.StartEpoch(3, 0);
  TakeRows(stream, 2, paired);  // abandoned after two batches ...
  stream.StartEpoch(3, 57);     // ... for a resume at batch 57
  const std::vector<int64_t> tail = TakeRows(stream, batches - 57, paired);
  EXPECT_TRUE(paired);
  EXPECT_EQ(tail, std::vector<int64_t>(whole.begin() + 57 * 10, whole.end()));
  std::filesystem::remove(path);
}

TEST(BlockStream, AFileTruncatedOrDeletedDuringTrainingIsADataError) {
  for (const bool truncate : {true, false}) {
    const std::string path = PathFor(truncate ? "truncated.h5" : "vanished.h5", true);
    WriteIndexedRows(path, MPI_COMM_SELF);
    BlockStream stream(Options(OneFile(path), 1, 0));
    bool paired = true;
    stream.StartEpoch(0, 0);
    TakeRows(stream, stream.BatchesPerEpoch(), paired);
    if (truncate) {
      std::filesystem::resize_file(path, std::filesystem::file_size(path) / 2);
    } else {
      std::filesystem::remove(path);
    }
    stream.StartEpoch(1, 0);
    std::string message;
    try {
      TakeRows(stream, 1, paired);
    } catch (const DataError& e) {
      message = e.what();
    }
    EXPECT_NE(message.find(truncate ? "was truncated from" : "vanished"), std::string::npos) << message;
    EXPECT_NE(message.find(path), std::string::npos) << message;
    std::filesystem::remove(path);
  }
}

}  // namespace
}  // namespace ct
