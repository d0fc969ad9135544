// runtime.shard_optimizer: Adam's one-pass update split over ranks equals PyTorch's
// torch.optim.Adam / AdamW on every rank, over the 100 recorded steps of
// tests/data/optimizer_reference.pt, both ways the split runs:
//   - in node-shared memory (the default; the MPI tests' ranks share a host): each rank updates
//     its part in place, and every rank sees the whole parameters and moments at once;
//   - all-gathered (no shared memory): the parameters are all-gathered after each step, and the
//     moments are complete on every rank only after GatherState(), which checkpoints call.
#include <gtest/gtest.h>

#include <string>

#include "comm/mpi_communicator.h"
#include "mpi/mpi_test_world.h"
#include "train/flat_adam.h"
#include "unit/optimizer_reference.h"

namespace ct {
namespace {

// Whether every element of `flat` outside this rank's ShardOf part is still zero.
bool ZeroOutsideMyPart(const at::Tensor& flat, const Communicator& comm) {
  const ShardRange mine = ShardOf(flat.numel(), comm.Rank(), comm.Size());
  const bool before = flat.narrow(0, 0, mine.begin).eq(0).all().item<bool>();
  const bool after = flat.narrow(0, mine.end, flat.numel() - mine.end).eq(0).all().item<bool>();
  return before && after;
}

void CheckSharded(const std::string& name, double weight_decay, bool decoupled, bool node_shared) {
  MpiCommunicator comm(MPI_COMM_WORLD);
  const c10::impl::GenericDict reference = test::LoadOptimizerReference();
  std::vector<at::Tensor> params = test::InitialParams(reference);
  const std::vector<GradientBucket> buckets = test::TwoBuckets(params);
  AdamSettings settings;
  settings.weight_decay = weight_decay;
  settings.decoupled = decoupled;
  settings.fused = false;
  settings.shard_over = &comm;
  settings.node_shared = node_shared;
  FlatAdam adam(params, buckets, settings);
  const bool split = adam.Describe().find("split over the node's") != std::string::npos;
  EXPECT_EQ(split, comm.Size() > 1) << adam.Describe();
  const bool shared = adam.Describe().find("in shared memory") != std::string::npos;
  EXPECT_EQ(shared, node_shared && comm.Size() > 1) << adam.Describe();
  const at::Tensor lrs = reference.at("lrs").toTensor();
  for (int64_t step = 0; step < lrs.size(0); ++step) {
    test::SetRecordedGradients(adam, params, reference, step);
    adam.Step(lrs[step].item<double>());
  }
  // Shared: every rank's part is already in every rank's view, with nothing gathered.
  if (shared) {
    SCOPED_TRACE("in shared memory, before GatherState");
    test::ExpectLikeReference(adam, params, reference, name);
  }
  // All-gathered: the moments outside this rank's part were never updated here; GatherState is
  // what fills them. Each group's first moment is one flat buffer, which its first parameter's
  // State view starts.
  if (comm.Size() > 1 && !shared) {
    for (const GradientBucket& bucket : buckets) {
      const at::Tensor start = adam.State(bucket.params.front(), 0);
      const at::Tensor flat = at::empty({0}).set_(start.storage(), start.storage_offset(), {bucket.grads.numel()}, {1});
      EXPECT_TRUE(test::AllRanksAgree(ZeroOutsideMyPart(flat, comm))) << name;
    }
  }
  adam.GatherState();
  test::ExpectLikeReference(adam, params, reference, name);
}

TEST(ShardedAdam, InNodeSharedMemoryEqualsTorchOptimAdamAdamWAndL2OnEveryRank) {
  CheckSharded("adam", 0.0, /*decoupled=*/true, /*node_shared=*/true);
  CheckSharded("adamw", 0.1, /*decoupled=*/true, /*node_shared=*/true);
  CheckSharded("adam_l2", 0.1, /*decoupled=*/false, /*node_shared=*/true);
}

TEST(ShardedAdam, AllGatheredEqualsTorchOptimAdamAdamWAndL2OnEveryRank) {
  CheckSharded("adam", 0.0, /*decoupled=*/true, /*node_shared=*/false);
  CheckSharded("adamw", 0.1, /*decoupled=*/true, /*node_shared=*/false);
  CheckSharded("adam_l2", 0.1, /*decoupled=*/false, /*node_shared=*/false);
}

}  // namespace
}  // namespace ct
