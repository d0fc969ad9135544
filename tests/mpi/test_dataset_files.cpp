// Several files as one dataset: a glob's files in name order, each rank's static slice across
// file boundaries, data.val_fraction's tail across them, and one error naming a file whose rows
// do not match the others'.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "data/dataset_files.h"
#include "data/shard_loader.h"
#include "data/sharding.h"
#include "error_of.h"
#include "mpi/indexed_rows.h"
#include "mpi/mpi_test_world.h"
#include "util/error.h"

namespace ct {
namespace {

constexpr int64_t kFileRowLength = 4;

// A directory for this test run, the same on every rank; removed by Cleanup.
std::string SharedDir(const char* name) {
  const std::string dir = test::SharedTempPath(std::string("files_") + name);
  if (test::World().Rank() == 0) std::filesystem::create_directory(dir);
  MPI_Barrier(MPI_COMM_WORLD);
  return dir;
}

void Cleanup(const std::string& dir) {
  MPI_Barrier(MPI_COMM_WORLD);
  if (test::World().Rank() == 0) std::filesystem::remove_all(dir);
}

// The global row numbers held by `rows` (input row i holds i; target must hold -i).
std::vector<int64_t> RowNumbers(const Batch& rows, bool& paired) {
  std::vector<int64_t> numbers;
  paired = paired && at::equal(rows["input"], -rows["target"]);
  for (int64_t i = 0; i < rows["input"].size(0); ++i) numbers.push_back(rows["input"][i][0].item<int64_t>());
  return numbers;
}

std::vector<int64_t> Range(int64_t begin, int64_t end) {
  std::vector<int64_t> numbers;
  for (int64_t i = begin; i < end; ++i) numbers.push_back(i);
  return numbers;
}

// Files of 120, 1, 40 and 39 rows, found by a glob: a rank's slice and the validation tail span
// files.
TEST(DatasetFiles, AGlobsFilesAreOneRowSpaceForStaticSlicesAndTheValidationTail) {
  const auto& world = test::World();
  const std::string dir = SharedDir("bank");
  const std::vector<int64_t> sizes = {120, 1, 40, 39};
  int64_t first = 0;
  for (size_t i = 0; i < sizes.size(); ++i) {
    test::WriteIndexedRows(dir + "/bank-0" + std::to_string(i) + ".h5", MPI_COMM_WORLD, first, sizes[i],
                           kFileRowLength);
    first += sizes[i];
  }
  const DatasetFiles files =
      OpenDatasetFiles("data.train", {dir + "/bank-*.h5"}, {{"input", "input"}, {"target", "target"}}, MPI_COMM_WORLD);
  EXPECT_EQ(files.paths.size(), 4u);
  EXPECT_EQ(files.paths[1], dir + "/bank-01.h5");
  EXPECT_EQ(files.schema.Rows(), 200);
  EXPECT_EQ(files.Where(160), "row 39 of '" + dir + "/bank-02.h5'");

  const c10::Device cpu(c10::kCPU);
  bool paired = true;
  const ShardLoader all = ShardLoader::Load(files, MPI_COMM_WORLD, cpu);
  const RowRange slice = RankSlice(200, world.Size(), world.Rank());
  bool ok = RowNumbers(all.Rows(0, all.Rows()), paired) == Range(slice.begin, slice.end);

  // 0.25: the last 50 rows (150-199), from file 2's row 29 on, are validation on every rank.
  const ShardLoader head = ShardLoader::Load(files, MPI_COMM_WORLD, cpu, 0.25, FilePart::kTrainingHead);
  const ShardLoader tail = ShardLoader::Load(files, MPI_COMM_WORLD, cpu, 0.25, FilePart::kValidationTail);
  const RowRange head_slice = RankSlice(150, world.Size(), world.Rank());
  const RowRange tail_slice = RankSlice(50, world.Size(), world.Rank());
  ok = ok && head.TotalRows() == 150 && tail.TotalRows() == 50 &&
       RowNumbers(head.Rows(0, head.Rows()), paired) == Range(head_slice.begin, head_slice.end) &&
       RowNumbers(tail.Rows(0, tail.Rows()), paired) == Range(150 + tail_slice.begin, 150 + tail_slice.end);
  EXPECT_TRUE(test::AllRanksAgree(ok && paired));
  Cleanup(dir);
}

TEST(DatasetFiles, AFileWithOtherRowsIsADataErrorNamingItOnEveryRank) {
  const std::string dir = SharedDir("odd");
  test::WriteIndexedRows(dir + "/a.h5", MPI_COMM_WORLD, 0, 10, kFileRowLength);
  test::WriteIndexedRows(dir + "/b.h5", MPI_COMM_WORLD, 10, 10, kFileRowLength + 1);
  const std::string message = test::ErrorOf([&] {
    OpenDatasetFiles("data.train", {dir + "/a.h5", dir + "/b.h5"}, {{"input", "input"}, {"target", "target"}},
                     MPI_COMM_WORLD);
  });
  EXPECT_TRUE(
      test::AllRanksAgree(message.rfind("'" + dir + "/b.h5': dataset 'input' has rows [5] of float32", 0) == 0 &&
                          message.find("has rows [4] of float32") != std::string::npos &&
                          message.find("every file of data.train must hold rows of one shape") != std::string::npos))
      << message;
  Cleanup(dir);
}

TEST(DatasetFiles, APatternMatchingNothingOrAFileNamedTwiceIsAConfigError) {
  const std::string dir = SharedDir("none");
  test::WriteIndexedRows(dir + "/a.h5", MPI_COMM_WORLD, 0, 10, kFileRowLength);
  const std::string none = test::ErrorOf([&] {
    OpenDatasetFiles("data.val", {dir + "/*.hdf5"}, {{"input", "input"}, {"target", "target"}}, MPI_COMM_WORLD);
  });
  const std::string twice = test::ErrorOf([&] {
    OpenDatasetFiles("data.train", {dir + "/a.h5", dir + "/*.h5"}, {{"input", "input"}, {"target", "target"}},
                     MPI_COMM_WORLD);
  });
  EXPECT_TRUE(test::AllRanksAgree(none.find("config key 'data.val': '" + dir + "/*.hdf5' matches no file") == 0 &&
                                  twice.find("names '" + dir + "/a.h5' twice") != std::string::npos))
      << none << "\n"
      << twice;
  Cleanup(dir);
}

}  // namespace
}  // namespace ct
