// Data parallelism's contract: the gradient averaged over W ranks, each holding B rows, equals
// one process's gradient on the union of those W*B rows.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "comm/gradient_sync.h"
#include "comm/mpi_communicator.h"
#include "model/vae_loss.h"
#include "model/vae_mlp.h"
#include "mpi/mpi_test_world.h"

namespace ct {
namespace {

constexpr int64_t kLength = 48, kLatent = 4, kBatch = 6;
const std::vector<int64_t> kHidden = {20, 12};

// Gradients of the VAE loss of `model` on rows [begin, begin+count) of the union batch.
std::vector<at::Tensor> Gradients(VaeMlp& model, const at::Tensor& x, const at::Tensor& y, const at::Tensor& eps) {
  model->zero_grad();
  at::Tensor loss = VaeBatchLoss(VaePerSampleLoss(model->forward(x, eps), y), 1e-3);
  loss.backward();
  std::vector<at::Tensor> grads;
  for (const auto& p : model->parameters()) grads.push_back(p.grad().clone());
  return grads;
}

TEST(GradientSync, AveragedGradientEqualsTheUnionBatchGradient) {
  MpiCommunicator comm(MPI_COMM_WORLD);
  const int w = comm.Size(), r = comm.Rank();
  torch::manual_seed(7);  // same model and same union batch on every rank
  VaeMlp model(kLength, kHidden, kLatent);
  at::Tensor x = torch::randn({w * kBatch, kLength});
  at::Tensor y = torch::randn({w * kBatch, kLength});
  at::Tensor eps = torch::randn({w * kBatch, kLatent});

  const std::vector<at::Tensor> expected = Gradients(model, x, y, eps);  // one process, all rows
  const auto mine = [&](const at::Tensor& t) { return t.narrow(0, r * kBatch, kBatch); };
  const std::vector<at::Tensor> local = Gradients(model, mine(x), mine(y), mine(eps));

  GradientSync sync(model->parameters(), comm);
  sync.AverageGradients();
  bool ok = true;
  bool local_differs = false;
  auto params = model->parameters();
  for (size_t i = 0; i < params.size(); ++i) {
    ok = ok && at::allclose(params[i].grad(), expected[i], /*rtol=*/1e-4, /*atol=*/1e-6);
    local_differs = local_differs || !at::allclose(local[i], expected[i], 1e-4, 1e-6);
  }
  EXPECT_TRUE(test::AllRanksAgree(ok)) << "averaged gradient differs from the union-batch gradient";
  // With several ranks the local gradient alone is not the answer: the test can fail.
  if (w > 1) {
    EXPECT_TRUE(test::AllRanksAgree(local_differs));
  }
}

// runtime.allreduce_precision=bf16: the same average, to bfloat16's precision.
TEST(GradientSync, BFloat16AllReduceAveragesToBFloat16Precision) {
  MpiCommunicator comm(MPI_COMM_WORLD);
  const int w = comm.Size(), r = comm.Rank();
  torch::manual_seed(7);
  VaeMlp model(kLength, kHidden, kLatent);
  at::Tensor x = torch::randn({w * kBatch, kLength});
  at::Tensor y = torch::randn({w * kBatch, kLength});
  at::Tensor eps = torch::randn({w * kBatch, kLatent});
  const std::vector<at::Tensor> expected = Gradients(model, x, y, eps);
  const auto mine = [&](const at::Tensor& t) { return t.narrow(0, r * kBatch, kBatch); };
  GradientSync sync(model->parameters(), comm, {25.0, true, /*bf16=*/true});
  Gradients(model, mine(x), mine(y), mine(eps));
  sync.AverageGradients();
  bool ok = true;
  double worst = 0;
  auto params = model->parameters();
  for (size_t i = 0; i < params.size(); ++i) {
    const at::Tensor& g = params[i].grad();
    ok = ok && g.scalar_type() == at::kFloat;
    // Relative to the gradient's scale: bf16 keeps about 3 significant digits.
    const double err = (g - expected[i]).abs().max().item<double>() / (expected[i].abs().max().item<double>() + 1e-12);
    worst = std::max(worst, err);
  }
  EXPECT_TRUE(test::AllRanksAgree(ok && worst < 2e-2)) << "worst relative error " << worst;
}

TEST(GradientSync, BroadcastGivesEveryRankRankZerosWeights) {
  MpiCommunicator comm(MPI_COMM_WORLD);
  torch::manual_seed(100 + comm.Rank());  // different weights on every rank
  VaeMlp model(kLength, kHidden, kLatent);
  GradientSync sync(model->parameters(), comm);
  sync.BroadcastParameters();
  for (const auto& p : model->parameters()) {
    at::Tensor mine = p.detach().clone();
    at::Tensor root = mine.clone();
    comm.Broadcast(root, 0);
    EXPECT_TRUE(test::AllRanksAgree(mine.equal(root)));
  }
}

}  // namespace
}  // namespace ct
