// comm/node_shared_memory: buffers that every rank of a node maps at once. A rank's writes are
// seen by the others after a barrier; the segment's name is gone from /dev/shm once mapped; a
// request /dev/shm cannot hold is refused on every rank with why, instead of a SIGBUS later; a
// name left by a process that ended is removed, one of a running process kept.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
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

// Creates /dev/shm/NAME with a few bytes in it, as a segment left behind would be.
void LeaveSegment(const std::string& name) {
  const int fd = shm_open(("/" + name).c_str(), O_CREAT | O_EXCL | O_RDWR, 0600);
  ASSERT_GE(fd, 0) << name;
  ASSERT_EQ(ftruncate(fd, 4096), 0);
  close(fd);
}

TEST(NodeSharedMemory, NamesLeftByEndedProcessesAreRemovedOthersKept) {
  MpiCommunicator comm(MPI_COMM_WORLD);
  // No process has the pid pid_max (pids are below it): a creator that ended. This process's
  // pid as the count keeps the name apart from a run of this test at the same time.
  int pid_max = 0;
  std::ifstream("/proc/sys/kernel/pid_max") >> pid_max;
  ASSERT_GT(pid_max, 0);
  const std::string ended = "clustertrain-" + std::to_string(pid_max) + "-" + std::to_string(getpid()) + "-0badf00d";
  const std::string running = "clustertrain-" + std::to_string(getpid()) + "-999-0badf00d";
  const std::string other = "clustertrain-notes-" + std::to_string(getpid());
  if (comm.Rank() == 0) {
    for (const std::string& name : {ended, running, other}) LeaveSegment(name);
  }
  comm.Barrier();
  const NodeSharedBuffers shared = comm.NodeSharedZeros({4});
  EXPECT_TRUE(test::AllRanksAgree(shared.buffers.size() == 1)) << shared.why_not;
  if (comm.Rank() == 0) {
    EXPECT_FALSE(std::filesystem::exists("/dev/shm/" + ended)) << "a name left by an ended process stays";
    EXPECT_TRUE(std::filesystem::exists("/dev/shm/" + running)) << "a running process's name was removed";
    EXPECT_TRUE(std::filesystem::exists("/dev/shm/" + other)) << "a name not of clustertrain's form was removed";
    for (const std::string& name : {ended, running, other}) shm_unlink(("/" + name).c_str());
  }
  comm.Barrier();
}

}  // namespace
}  // namespace ct
