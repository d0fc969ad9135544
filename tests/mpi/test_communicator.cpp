#include <gtest/gtest.h>

#include "comm/mpi_communicator.h"
#include "mpi/mpi_test_world.h"
#include "util/error.h"

namespace ct {
namespace {

TEST(MpiCommunicator, AllReduceSumsAndAveragesOddSizesAndDtypes) {
  MpiCommunicator comm(MPI_COMM_WORLD);
  const int w = comm.Size();
  const double rank_sum = w * (w + 1) / 2.0;  // sum over ranks of (rank + 1)
  for (auto dtype : {at::kFloat, at::kDouble, at::kLong}) {
    for (int64_t n : {1, 7, 1001, 65537}) {
      at::Tensor t = at::arange(n, dtype) * (comm.Rank() + 1);
      comm.AllReduceSum(t);
      EXPECT_TRUE(test::AllRanksAgree(t.equal(at::arange(n, dtype) * static_cast<int64_t>(rank_sum))))
          << c10::toString(dtype) << " n=" << n;
    }
  }
  at::Tensor avg = at::full({333}, static_cast<float>(comm.Rank()));
  comm.AllReduceAverage(avg);
  EXPECT_TRUE(test::AllRanksAgree(at::allclose(avg, at::full({333}, (w - 1) / 2.0f))));
}

TEST(MpiCommunicator, BroadcastCopiesTheRootsTensor) {
  MpiCommunicator comm(MPI_COMM_WORLD);
  const int root = comm.Size() - 1;
  at::Tensor t = at::full({5, 3}, static_cast<float>(comm.Rank()));
  comm.Broadcast(t, root);
  EXPECT_TRUE(test::AllRanksAgree(t.equal(at::full({5, 3}, static_cast<float>(root)))));
}

TEST(MpiCommunicator, RejectsUnsupportedInputsClearly) {
  MpiCommunicator comm(MPI_COMM_WORLD);
  at::Tensor strided = at::zeros({4, 4}).t();
  EXPECT_THROW(comm.AllReduceSum(strided), CommError);
  at::Tensor half = at::zeros({4}, at::kHalf);
  EXPECT_THROW(comm.AllReduceSum(half), CommError);
}

}  // namespace
}  // namespace ct
