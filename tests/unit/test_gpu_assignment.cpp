// Which GPU each local rank uses, from the bus ids every local rank sees (cluster/gpu_assignment.h).
#include <gtest/gtest.h>

#include "cluster/gpu_assignment.h"
#include "util/error.h"

namespace ct {
namespace {

using Lists = std::vector<std::vector<std::string>>;
const std::vector<std::string> kFour = {"0000:17:00.0", "0000:31:00.0", "0000:b1:00.0", "0000:ca:00.0"};

// The message of the ConfigError AssignGpus throws for local rank `rank`, or "" if none.
std::string ErrorFor(const Lists& visible, int rank) {
  try {
    AssignGpus(visible, rank, "node7");
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

TEST(GpuAssignment, EveryRankSeesEveryGpu) {  // mpirun, srun --gpus-per-node=4
  const Lists visible(4, kFour);
  for (int q = 0; q < 4; ++q) {
    const GpuAssignment a = AssignGpus(visible, q, "node7");
    EXPECT_EQ(a.device_index, q);
    EXPECT_EQ(a.bus_id_by_local_rank, kFour);
  }
}

TEST(GpuAssignment, OneGpuPerRankEachSeesOnlyItsOwn) {  // srun --gpus-per-task=1
  const Lists visible = {{kFour[2]}, {kFour[0]}, {kFour[3]}, {kFour[1]}};
  for (int q = 0; q < 4; ++q) {
    const GpuAssignment a = AssignGpus(visible, q, "node7");
    EXPECT_EQ(a.device_index, 0) << "its only GPU is its device 0";
    // Every rank knows its neighbours' GPUs (for the socket each binds to), not only its own.
    EXPECT_EQ(a.bus_id_by_local_rank, (std::vector<std::string>{kFour[2], kFour[0], kFour[3], kFour[1]}));
  }
}

TEST(GpuAssignment, PairsOfRanksShareAPairOfGpus) {  // two ranks per 2-GPU task set
  const Lists visible = {{kFour[0], kFour[1]}, {kFour[0], kFour[1]}, {kFour[2], kFour[3]}, {kFour[2], kFour[3]}};
  EXPECT_EQ(AssignGpus(visible, 1, "n").device_index, 1);
  EXPECT_EQ(AssignGpus(visible, 2, "n").device_index, 0);
  EXPECT_EQ(AssignGpus(visible, 3, "n").bus_id_by_local_rank, kFour);
}

TEST(GpuAssignment, MoreRanksThanGpusIsOneErrorWithCountsAndFix) {
  const Lists visible(3, {kFour[0], kFour[1]});
  for (int q = 0; q < 3; ++q) {
    const std::string error = ErrorFor(visible, q);
    EXPECT_NE(error.find("3 ranks on node7 see the same 2 GPU(s)"), std::string::npos) << error;
    EXPECT_NE(error.find("--gpus-per-task=1"), std::string::npos) << error;
    EXPECT_EQ(error, ErrorFor(visible, 0)) << "every local rank says the same";
  }
}

TEST(GpuAssignment, OverlappingVisibleSetsWouldShareAGpu) {
  const Lists visible = {{kFour[0], kFour[1]}, {kFour[0]}};
  const std::string error = ErrorFor(visible, 1);
  EXPECT_NE(error.find("local ranks 0 and 1 would both use GPU 0000:17:00.0"), std::string::npos) << error;
}

TEST(GpuAssignment, ARankThatSeesNoGpuIsNamed) {
  const Lists visible = {{kFour[0]}, {}};
  const std::string error = ErrorFor(visible, 0);
  EXPECT_NE(error.find("on node7, local rank 1 of 2 sees no GPU"), std::string::npos) << error;
}

TEST(DeviceKindMismatch, OneKindOfDeviceOnEveryRankIsFine) {
  EXPECT_EQ(DeviceKindMismatch({"a", "a", "b", "b"}, {true, true, true, true}), "");
  EXPECT_EQ(DeviceKindMismatch({"a", "a", "b", "b"}, {false, false, false, false}), "");
  EXPECT_EQ(DeviceKindMismatch({"a"}, {true}), "");
}

// A job whose second node got no GPUs (sbatch --gres on one partition's nodes only, a node
// without its driver): NCCL on one node and MPI on the other would hang; the ranks say where.
TEST(DeviceKindMismatch, NodesWithAndWithoutGpusAreNamedWithTheirRanks) {
  EXPECT_EQ(DeviceKindMismatch({"gpu01", "gpu01", "cpu07", "cpu07", "cpu08"}, {true, true, false, false, false}),
            "train.device=auto found GPUs for some ranks and none for others: GPUs on gpu01 (ranks 0, 1); none on "
            "cpu07 (ranks 2, 3), cpu08 (rank 4). Every rank trains on the same kind of device: give the job GPUs on "
            "every node (Slurm: --gpus-per-node=N) or set train.device=cpu");
}

}  // namespace
}  // namespace ct
