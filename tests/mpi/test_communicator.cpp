#include <gtest/gtest.h>

#include "comm/make_communicator.h"
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

// Sizes below, at and above the number of ranks (some parts empty, some one element longer).
TEST(MpiCommunicator, AllGatherShardsGivesEveryRankEveryRanksPart) {
  MpiCommunicator comm(MPI_COMM_WORLD);
  const int w = comm.Size(), r = comm.Rank();
  for (int64_t n : {int64_t{1}, int64_t{16} * w, int64_t{16} * w + 1, int64_t{1001}, int64_t{65537}}) {
    // The parts tile [0, n) in rank order, start on 16-element units, and hold the same number
    // of units to within one.
    const int64_t units = (n + 15) / 16;
    int64_t covered = 0;
    for (int k = 0; k < w; ++k) {
      const ShardRange part = ShardOf(n, k, w);
      EXPECT_EQ(part.begin, covered) << "n=" << n << " rank " << k;
      EXPECT_TRUE(part.begin % 16 == 0 || part.begin == n) << "n=" << n << " rank " << k;
      const int64_t part_units = (part.end - part.begin + 15) / 16;
      EXPECT_TRUE(part_units == units / w || part_units == units / w + 1) << "n=" << n << " rank " << k;
      covered = part.end;
    }
    EXPECT_EQ(covered, n);
    // Each rank writes (its rank + 1) x index into its part, -1 elsewhere.
    const ShardRange mine = ShardOf(n, r, w);
    at::Tensor t = at::full({n}, -1.0f);
    t.narrow(0, mine.begin, mine.end - mine.begin).copy_(at::arange(mine.begin, mine.end, at::kFloat) * (r + 1));
    comm.AllGatherShards(t);
    at::Tensor want = at::empty({n});
    for (int k = 0; k < w; ++k) {
      const ShardRange part = ShardOf(n, k, w);
      want.narrow(0, part.begin, part.end - part.begin).copy_(at::arange(part.begin, part.end, at::kFloat) * (k + 1));
    }
    EXPECT_TRUE(test::AllRanksAgree(t.equal(want))) << "n=" << n;
  }
}

TEST(MpiCommunicator, BroadcastCopiesTheRootsTensor) {
  MpiCommunicator comm(MPI_COMM_WORLD);
  const int root = comm.Size() - 1;
  at::Tensor t = at::full({5, 3}, static_cast<float>(comm.Rank()));
  comm.Broadcast(t, root);
  EXPECT_TRUE(test::AllRanksAgree(t.equal(at::full({5, 3}, static_cast<float>(root)))));
}

TEST(MpiCommunicator, AsyncAllReducesFinishInIssueOrderWithCorrectMeans) {
  MpiCommunicator comm(MPI_COMM_WORLD);
  const int w = comm.Size();
  std::vector<at::Tensor> tensors;
  for (int64_t n : {1, 3, 4097, 1 << 20, 17}) {  // odd sizes, one large, several in flight
    tensors.push_back(at::full({n}, static_cast<double>(comm.Rank() + n)));
  }
  std::vector<std::unique_ptr<Work>> works = comm.AllReduceAverageAsyncEach(tensors);
  ASSERT_EQ(works.size(), tensors.size());
  for (auto& work : works) work->Wait();
  bool ok = true;
  for (const at::Tensor& t : tensors) {
    const double expected = (w - 1) / 2.0 + static_cast<double>(t.numel());
    ok = ok && at::allclose(t, at::full_like(t, expected));
  }
  EXPECT_TRUE(test::AllRanksAgree(ok));
  // A blocking collective after async work sees the queue drained (MPI_THREAD_SERIALIZED).
  at::Tensor one = at::ones({2}, at::kLong);
  comm.AllReduceSum(one);
  EXPECT_TRUE(test::AllRanksAgree(one.equal(at::full({2}, w, at::kLong))));
}

TEST(MpiCommunicator, AllGatherCollectsEveryRanksValuesInRankOrder) {
  MpiCommunicator comm(MPI_COMM_WORLD);
  at::Tensor mine = at::tensor({static_cast<double>(comm.Rank()), 10.0 * comm.Rank()});
  at::Tensor all = comm.AllGather(mine);
  at::Tensor ranks = at::arange(comm.Size(), at::kDouble);
  EXPECT_TRUE(test::AllRanksAgree(all.sizes() == at::IntArrayRef({comm.Size(), 2}) &&
                                  all.equal(at::stack({ranks, ranks * 10}, 1))));
  comm.Barrier();
}

// bfloat16 has no MPI datatype: summed by clustertrain's own MPI_Op. Small integers sum exactly;
// the average of random values is within bf16's rounding (8 bits of mantissa) of the float32 one.
TEST(MpiCommunicator, AllReducesBFloat16) {
  MpiCommunicator comm(MPI_COMM_WORLD);
  const int w = comm.Size(), r = comm.Rank();
  // Integers below 256, and so every partial sum: exact in bf16.
  const at::Tensor base = at::arange(1001, at::kFloat).remainder(32);
  at::Tensor ints = base.add(r).to(at::kBFloat16);
  comm.AllReduceSum(ints);
  const at::Tensor expected_sum = base.mul(w).add(w * (w - 1) / 2.0);
  bool ok = ints.scalar_type() == at::kBFloat16 && ints.to(at::kFloat).equal(expected_sum);

  at::manual_seed(5);
  const at::Tensor all = at::randn({w, 4097});  // every rank draws all ranks' values
  at::Tensor mine = all[r].to(at::kBFloat16);
  comm.AllReduceAverageAsync(mine)->Wait();
  const at::Tensor reference = all.to(at::kBFloat16).to(at::kFloat).mean(0);
  ok = ok && at::allclose(mine.to(at::kFloat), reference, /*rtol=*/2e-2, /*atol=*/2e-2);
  EXPECT_TRUE(test::AllRanksAgree(ok));
}

TEST(MpiCommunicator, RejectsUnsupportedInputsClearly) {
  MpiCommunicator comm(MPI_COMM_WORLD);
  at::Tensor strided = at::zeros({4, 4}).t();
  EXPECT_THROW(comm.AllReduceSum(strided), CommError);
  at::Tensor half = at::zeros({4}, at::kHalf);
  EXPECT_THROW(comm.AllReduceSum(half), CommError);
  EXPECT_THROW(comm.AllReduceAverageAsync(half), CommError);  // at the call, not later on the thread
}

}  // namespace
}  // namespace ct

namespace ct {
namespace {

std::string FactoryError(BackendChoice backend, const c10::Device& device) {
  RuntimeConfig runtime;
  runtime.backend = backend;
  try {
    ChooseBackend(runtime, device);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

TEST(MakeCommunicator, ChoosesByDeviceAndRefusesWhatCannotWork) {
  RuntimeConfig runtime;  // backend auto
  EXPECT_EQ(MakeCommunicator(runtime, test::World(), c10::Device(c10::kCPU))->Name(), "mpi");
  EXPECT_NE(FactoryError(BackendChoice::kMpi, c10::Device(c10::kCUDA, 0)).find("cannot reduce CUDA tensors"),
            std::string::npos);
#ifdef CT_HAVE_NCCL
  EXPECT_EQ(ChooseBackend(runtime, c10::Device(c10::kCUDA, 0)), BackendChoice::kNccl);
  EXPECT_NE(FactoryError(BackendChoice::kNccl, c10::Device(c10::kCPU)).find("needs train.device=cuda"),
            std::string::npos);
#else
  // NCCL requested from a build without it: the error names the CMake switch.
  EXPECT_NE(FactoryError(BackendChoice::kNccl, c10::Device(c10::kCPU)).find("-DCT_WITH_NCCL=ON"), std::string::npos);
#endif
}

}  // namespace
}  // namespace ct
