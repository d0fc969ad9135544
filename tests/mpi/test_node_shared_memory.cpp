// comm/node_shared_memory: buffers that every rank of a node maps at once. A rank's writes are
// seen by the others after a barrier; the segment's name is gone from /dev/shm once mapped; a
// request /dev/shm cannot hold is refused on every rank with why, instead of a SIGBUS later.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "comm/mpi_communicator.h"
#include "mpi/mpi_test_world.h"

namespace ct {
namespace {

// Whether /dev/shm holds a segment this process (the node's rank 0, which creates them) named.
bool SegmentOfThisProcessLeft() {
  const std::string prefix = "clustertrain-" + std::to_string(getpid()) + "-";
  for (const auto& entry : std::filesystem::directory_iterator("/dev/shm")) {
    if (entry.path().filename().string().rfind(prefix, 0) == 0) return true;
  }
  return false;
}

TEST(NodeSharedMemory, EveryRankSeesEveryRanksWritesInZeroedBuffers) {
  MpiCommunicator comm(MPI_COMM_WORLD);
  const NodeSharedBuffers shared = comm.NodeSharedZeros({5, 1000, 0, 17});
  ASSERT_TRUE(test::AllRanksAgree(shared.buffers.size() == 4)) << shared.why_not;
  EXPECT_TRUE(shared.why_not.empty());
  const std::vector<int64_t> sizes = {5, 1000, 0, 17};
  bool zero = true;
  for (size_t i = 0; i < sizes.size(); ++i) {
    EXPECT_EQ(shared.buffers[i].numel(), sizes[i]);
    EXPECT_EQ(shared.buffers[i].scalar_type(), at::kFloat);
    zero = zero && shared.buffers[i].eq(0).all().item<bool>();
  }
  EXPECT_TRUE(test::AllRanksAgree(zero));
  comm.Barrier();  // nobody writes before every rank has seen the zeros

  // Each rank writes its own element of the second buffer; after a barrier all see all.
  shared.buffers[1][comm.Rank()] = static_cast<float>(comm.Rank() + 1);
  comm.Barrier();
  bool all = true;
  for (int r = 0; r < comm.Size(); ++r) all = all && shared.buffers[1][r].item<float>() == static_cast<float>(r + 1);
  EXPECT_TRUE(test::AllRanksAgree(all));
  if (comm.Rank() == 0) {
    EXPECT_FALSE(SegmentOfThisProcessLeft()) << "the name stays in /dev/shm after every rank mapped it";
  }
  comm.Barrier();  // no rank frees its mapping while another still reads
}

TEST(NodeSharedMemory, MoreThanDevShmHoldsIsRefusedOnEveryRankWithWhy) {
  MpiCommunicator comm(MPI_COMM_WORLD);
  const int64_t petabyte_of_floats = int64_t{1} << 48;
  const NodeSharedBuffers shared = comm.NodeSharedZeros({16, petabyte_of_floats});
  EXPECT_TRUE(test::AllRanksAgree(shared.buffers.empty()));
  EXPECT_NE(shared.why_not.find("rank 0 of the node"), std::string::npos) << shared.why_not;
  EXPECT_NE(shared.why_not.find("/dev/shm has"), std::string::npos) << shared.why_not;
  EXPECT_NE(shared.why_not.find("--shm-size"), std::string::npos) << shared.why_not;
  if (comm.Rank() == 0) {
    EXPECT_FALSE(SegmentOfThisProcessLeft());
  }
}

}  // namespace
}  // namespace ct
