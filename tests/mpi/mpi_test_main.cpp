// main() of the MPI tests: run under `mpiexec -n N`. Every rank runs every test; each test's
// verdict is agreed over ranks (AllRanksAgree), and the exit code is the worst over ranks.
// Ranks other than 0 print only failures.
#include <ATen/Parallel.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "cluster/mpi_world.h"
#include "mpi/mpi_test_world.h"

namespace ct::test {
namespace {
const MpiWorld* g_world = nullptr;
}
const MpiWorld& World() { return *g_world; }

bool AllRanksAgree(bool ok) {
  int value = ok ? 1 : 0;
  MPI_Allreduce(MPI_IN_PLACE, &value, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  return value == 1;
}

std::string SharedTempPath(const std::string& name) {
  int pid = static_cast<int>(getpid());
  MPI_Bcast(&pid, 1, MPI_INT, 0, MPI_COMM_WORLD);
  return std::filesystem::temp_directory_path().string() + "/ct_mpi_" + std::to_string(pid) + "_" + name;
}
}  // namespace ct::test

int main(int argc, char** argv) {
  ct::MpiWorld world(&argc, &argv);
  ct::test::g_world = &world;
  at::set_num_threads(1);  // several ranks share two cores
  testing::InitGoogleTest(&argc, argv);
  if (world.Rank() != 0) GTEST_FLAG_SET(brief, true);
  int failed = RUN_ALL_TESTS();
  MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  return failed;
}
