// make-data writes collectively; ShardLoader reads each rank's disjoint slice back.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "data/chirp.h"
#include "data/h5_file.h"
#include "data/shard_loader.h"
#include "data/sharding.h"
#include "data/synthetic_writer.h"
#include "mpi/mpi_test_world.h"
#include "util/error.h"

namespace ct {
namespace {

using test::SharedTempPath;

TEST(ShardLoader, EachRankReadsExactlyItsRowsOfACollectivelyWrittenFile) {
  const auto& world = test::World();
  const std::string path = SharedTempPath("rows.h5");
  ChirpOptions options;
  options.length = 64;
  options.seed = 5;
  const int64_t rows = 1001;  // not divisible by 2, 3 or 4
  WriteChirpDataset(path, rows, options, MPI_COMM_WORLD);
  EXPECT_FALSE(std::filesystem::exists(path + ".tmp"));

  ShardLoader loader =
      ShardLoader::Load(path, {{"input", "input"}, {"target", "target"}}, MPI_COMM_WORLD, c10::Device(c10::kCPU));
  const RowRange slice = RankSlice(rows, world.Size(), world.Rank());
  EXPECT_EQ(loader.TotalRows(), rows);
  EXPECT_EQ(loader.Rows(), slice.Size());
  EXPECT_EQ(loader.Fields()[0].dims, std::vector<int64_t>{64});

  // Every row read equals the generator's row of the same global index.
  bool ok = loader.Rows() == slice.Size();
  std::vector<float> noisy(64), clean(64);
  Batch all = loader.Rows(0, loader.Rows());
  for (int64_t i = 0; ok && i < loader.Rows(); ++i) {
    ChirpRow(options, slice.begin + i, noisy.data(), clean.data());
    ok = std::equal(noisy.begin(), noisy.end(), all["input"][i].data_ptr<float>()) &&
         std::equal(clean.begin(), clean.end(), all["target"][i].data_ptr<float>());
  }
  EXPECT_TRUE(test::AllRanksAgree(ok));

  // A shuffled batch is a set of distinct local rows.
  loader.Shuffle(9, 0, world.Rank());
  Batch b = loader.ShuffledBatch(1, 10);
  EXPECT_EQ(b["input"].size(0), 10);
  EXPECT_EQ(std::get<0>(at::_unique(b["input"].select(1, 0))).numel(), 10);

  MPI_Barrier(MPI_COMM_WORLD);
  if (world.Rank() == 0) std::filesystem::remove(path);
}

// The memory type matches the file type and the selections are plain hyperslabs, so HDF5 keeps
// the transfer collective instead of silently falling back to independent I/O.
TEST(ShardLoader, SliceReadsStayCollective) {
  const auto& world = test::World();
  const std::string path = SharedTempPath("collective.h5");
  ChirpOptions options;
  options.length = 32;
  WriteChirpDataset(path, 777, options, MPI_COMM_WORLD);
  uint32_t cause = 1;
  {
    ParallelH5File file(path, ParallelH5File::Mode::kRead, MPI_COMM_WORLD);
    const RowRange slice = RankSlice(777, world.Size(), world.Rank());
    std::vector<float> rows(static_cast<size_t>(slice.Size() * 32));
    file.ReadRows("input", slice.begin, slice.Size(), rows.data());
    cause = file.CollectiveFallbackCause();
  }
  EXPECT_TRUE(test::AllRanksAgree(cause == 0)) << "H5D_MPIO cause bits " << cause;
  MPI_Barrier(MPI_COMM_WORLD);
  if (world.Rank() == 0) std::filesystem::remove(path);
}

TEST(ShardLoader, MissingDatasetIsADataErrorNamingTheKey) {
  const std::string path = SharedTempPath("keys.h5");
  ChirpOptions options;
  options.length = 8;
  WriteChirpDataset(path, 16, options, MPI_COMM_WORLD);
  std::string message;
  try {
    ShardLoader::Load(path, {{"input", "strain"}, {"target", "target"}}, MPI_COMM_WORLD, c10::Device(c10::kCPU));
  } catch (const DataError& e) {
    message = e.what();
  }
  EXPECT_TRUE(test::AllRanksAgree(message.find("no dataset 'strain'") != std::string::npos)) << message;
  MPI_Barrier(MPI_COMM_WORLD);
  if (test::World().Rank() == 0) std::filesystem::remove(path);
}

// HDF5's error stack is summarised on one line: what failed and, innermost, why.
TEST(ShardLoader, NotHdf5IsADataErrorWithHdf5sCauseOnOneLine) {
  const std::string path = SharedTempPath("not_hdf5.h5");
  if (test::World().Rank() == 0) std::ofstream(path) << "time,strain\n0,1\n";
  MPI_Barrier(MPI_COMM_WORLD);
  std::string message;
  try {
    ParallelH5File file(path, ParallelH5File::Mode::kRead, MPI_COMM_WORLD);
  } catch (const DataError& e) {
    message = e.what();
  }
  EXPECT_TRUE(test::AllRanksAgree(message.find("cannot open '" + path + "' as an HDF5 file") != std::string::npos &&
                                  message.find("file signature not found") != std::string::npos &&
                                  message.find('\n') == std::string::npos))
      << message;
  MPI_Barrier(MPI_COMM_WORLD);
  if (test::World().Rank() == 0) std::filesystem::remove(path);
}

}  // namespace
}  // namespace ct
