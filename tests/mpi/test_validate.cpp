// The validation loss reduced as (sum, count) equals the single-process mean over the whole
// validation set, for any world size and an uneven split (1001 rows).
#include <gtest/gtest.h>
#include <torch/torch.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>

#include "comm/mpi_communicator.h"
#include "data/shard_loader.h"
#include "data/synthetic_writer.h"
#include "model/make_model.h"
#include "mpi/mpi_test_world.h"
#include "train/validate.h"

namespace ct {
namespace {

TEST(Validate, ReducedLossEqualsTheSingleProcessMean) {
  const std::string path = test::SharedTempPath("val.h5");
  ChirpOptions options;
  options.length = 32;
  WriteChirpDataset(path, 1001, options, MPI_COMM_WORLD);

  torch::manual_seed(3);
  ModelConfig config;
  config.hidden = {16};
  config.latent = 4;
  config.beta = 0.5;
  std::unique_ptr<Model> model = MakeModel(config, {{"input", {32}}, {"target", {32}}});
  const c10::Device cpu(c10::kCPU);
  MpiCommunicator world_comm(MPI_COMM_WORLD);
  ShardLoader mine = ShardLoader::Load(path, {{"input", "input"}, {"target", "target"}}, MPI_COMM_WORLD, cpu);
  const ValResult reduced = Validate(*model, mine, Precision::kFp32, world_comm);

  // Every rank alone, over every row.
  MpiCommunicator self_comm(MPI_COMM_SELF);
  ShardLoader all = ShardLoader::Load(path, {{"input", "input"}, {"target", "target"}}, MPI_COMM_SELF, cpu);
  ASSERT_EQ(all.Rows(), 1001);
  const ValResult single = Validate(*model, all, Precision::kFp32, self_comm);

  // Per-sample losses are float32 and BLAS rounds a 500-row batch differently from a
  // 1001-row one, so agreement is to float32 precision, not bit for bit.
  auto close = [](double a, double b) { return std::fabs(a - b) <= 1e-6 * std::fabs(b); };
  EXPECT_TRUE(test::AllRanksAgree(close(reduced.loss, single.loss) && close(reduced.metrics[0], single.metrics[0]) &&
                                  close(reduced.metrics[1], single.metrics[1])))
      << reduced.loss << " vs " << single.loss;
  EXPECT_TRUE(test::AllRanksAgree(close(reduced.loss, reduced.metrics[0] + 0.5 * reduced.metrics[1])));
  MPI_Barrier(MPI_COMM_WORLD);
  if (test::World().Rank() == 0) std::filesystem::remove(path);
}

}  // namespace
}  // namespace ct
