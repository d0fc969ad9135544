// model/vae_loss_terms: the VAE loss's per-row squared error and KL term and their weighted batch
// mean, one autograd node each on the CPU, give LibTorch's numbers and gradients (first and second
// order), on shapes that are not multiples of the vector width and on the column halves chunk() gives.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "expect_close.h"
#include "model/vae_loss_terms.h"

namespace ct {
namespace {

torch::Tensor ReferenceMse(const torch::Tensor& recon, const torch::Tensor& target) {
  return (recon - target).pow(2).mean(/*dim=*/1);
}

torch::Tensor ReferenceKl(const torch::Tensor& mu, const torch::Tensor& logvar) {
  return -0.5 * (1 + logvar - mu.pow(2) - logvar.exp()).sum(/*dim=*/1);
}

void ExpectLossClose(const torch::Tensor& a, const torch::Tensor& b, const std::string& what) {
  test::ExpectClose(a, b, what, {1e-5, 1e-7});
}

// Row weights that differ per row, so that a wrong row in the gradient shows.
torch::Tensor RowWeights(int64_t rows) { return torch::linspace(-1, 2, rows); }

TEST(VaeLossTerms, SquaredErrorEqualsLibTorchsInValueAndGradientOverOddShapes) {
  for (const auto& [rows, cols] : std::vector<std::pair<int64_t, int64_t>>{{1, 1}, {5, 37}, {3, 16}, {128, 1024}}) {
    SCOPED_TRACE(std::to_string(rows) + " x " + std::to_string(cols));
    torch::manual_seed(7);
    const torch::Tensor recon0 = torch::randn({rows, cols}), target = torch::randn({rows, cols});
    torch::Tensor fast_recon = recon0.clone().requires_grad_(true);
    torch::Tensor plain_recon = recon0.clone().requires_grad_(true);
    const torch::Tensor fast = RowMeanSquaredError(fast_recon, target);
    const torch::Tensor plain = ReferenceMse(plain_recon, target);
    ExpectLossClose(fast, plain, "value");
    ASSERT_NE(fast.grad_fn(), nullptr);
    EXPECT_NE(fast.grad_fn()->name().find("RowMeanSquaredError"), std::string::npos) << fast.grad_fn()->name();
    (fast * RowWeights(rows)).sum().backward();
    (plain * RowWeights(rows)).sum().backward();
    ExpectLossClose(fast_recon.grad(), plain_recon.grad(), "gradient");
    // Validation runs without autograd: the same values.
    torch::NoGradGuard no_grad;
    ExpectLossClose(RowMeanSquaredError(recon0, target), plain.detach(), "value without grad");
  }
}

TEST(VaeLossTerms, SquaredErrorGivesTheTargetAGradientWhenItNeedsOne) {
  torch::manual_seed(8);
  torch::Tensor recon = torch::randn({4, 9}, torch::requires_grad());
  torch::Tensor target = torch::randn({4, 9}, torch::requires_grad());
  RowMeanSquaredError(recon, target).sum().backward();
  ASSERT_TRUE(target.grad().defined());
  ExpectLossClose(target.grad(), -recon.grad(), "target gradient");
}

TEST(VaeLossTerms, SecondOrderGradientsEqualLibTorchs) {
  torch::manual_seed(9);
  const torch::Tensor recon0 = torch::randn({6, 21}), target = torch::randn({6, 21});
  const torch::Tensor h0 = torch::randn({6, 8});
  std::vector<torch::Tensor> second;
  for (bool fast : {true, false}) {
    torch::Tensor recon = recon0.clone().requires_grad_(true);
    torch::Tensor h = h0.clone().requires_grad_(true);
    const std::vector<torch::Tensor> halves = h.chunk(2, /*dim=*/1);
    const torch::Tensor loss = fast ? (RowMeanSquaredError(recon, target) + RowGaussianKl(halves[0], halves[1])).sum()
                                    : (ReferenceMse(recon, target) + ReferenceKl(halves[0], halves[1])).sum();
    const auto grads = torch::autograd::grad({loss}, {recon, h}, {}, /*retain_graph=*/true, /*create_graph=*/true);
    (grads[0].pow(2).sum() + grads[1].pow(2).sum()).backward();
    second.push_back(recon.grad());
    second.push_back(h.grad());
  }
  ExpectLossClose(second[0], second[2], "second-order recon gradient");
  ExpectLossClose(second[1], second[3], "second-order latent gradient");
}

TEST(VaeLossTerms, KlEqualsLibTorchsOnTheHalvesOfOneEncoderOutput) {
  for (const auto& [rows, latent] : std::vector<std::pair<int64_t, int64_t>>{{1, 1}, {7, 3}, {128, 16}}) {
    SCOPED_TRACE(std::to_string(rows) + " x " + std::to_string(latent));
    torch::manual_seed(10);
    const torch::Tensor h0 = torch::randn({rows, 2 * latent});
    torch::Tensor fast_h = h0.clone().requires_grad_(true);
    torch::Tensor plain_h = h0.clone().requires_grad_(true);
    const std::vector<torch::Tensor> f = fast_h.chunk(2, /*dim=*/1), p = plain_h.chunk(2, /*dim=*/1);
    ASSERT_FALSE(f[0].is_contiguous() && latent > 1);  // rows apart by 2 * latent: the case training has
    const torch::Tensor fast = RowGaussianKl(f[0], f[1]);
    const torch::Tensor plain = ReferenceKl(p[0], p[1]);
    ExpectLossClose(fast, plain, "value");
    (fast * RowWeights(rows)).sum().backward();
    (plain * RowWeights(rows)).sum().backward();
    ExpectLossClose(fast_h.grad(), plain_h.grad(), "gradient");
  }
}

TEST(VaeLossTerms, WeightedBatchMeanEqualsLibTorchsInValueAndGradient) {
  for (const int64_t rows : {1, 5, 128}) {
    SCOPED_TRACE(std::to_string(rows) + " rows");
    torch::manual_seed(11);
    const torch::Tensor mse0 = torch::rand({rows}), kl0 = torch::rand({rows}) * 40;
    torch::Tensor fast_mse = mse0.clone().requires_grad_(true), fast_kl = kl0.clone().requires_grad_(true);
    torch::Tensor plain_mse = mse0.clone().requires_grad_(true), plain_kl = kl0.clone().requires_grad_(true);
    const torch::Tensor fast = WeightedBatchMean(fast_mse, fast_kl, 1e-3);
    const torch::Tensor plain = plain_mse.mean() + 1e-3 * plain_kl.mean();
    EXPECT_EQ(fast.dim(), 0);
    ExpectLossClose(fast, plain, "value");
    ASSERT_NE(fast.grad_fn(), nullptr);
    EXPECT_NE(fast.grad_fn()->name().find("WeightedBatchMean"), std::string::npos) << fast.grad_fn()->name();
    (fast * 3).backward();  // an incoming gradient other than 1
    (plain * 3).backward();
    ExpectLossClose(fast_mse.grad(), plain_mse.grad(), "mse gradient");
    ExpectLossClose(fast_kl.grad(), plain_kl.grad(), "kl gradient");
  }
}

TEST(VaeLossTerms, WeightedBatchMeanHasLibTorchsSecondOrderGradient) {
  torch::manual_seed(12);
  const torch::Tensor recon0 = torch::randn({6, 21}), target = torch::randn({6, 21});
  std::vector<torch::Tensor> second;
  for (bool fast : {true, false}) {
    torch::Tensor recon = recon0.clone().requires_grad_(true);
    const torch::Tensor mse = ReferenceMse(recon, target), kl = recon.pow(2).sum(1);
    const torch::Tensor loss = fast ? WeightedBatchMean(mse, kl, 0.5) : mse.mean() + 0.5 * kl.mean();
    const auto grads = torch::autograd::grad({loss}, {recon}, {}, /*retain_graph=*/true, /*create_graph=*/true);
    grads[0].pow(2).sum().backward();
    second.push_back(recon.grad());
  }
  ExpectLossClose(second[0], second[1], "second-order gradient");
}

TEST(VaeLossTerms, OtherDtypesTakeLibTorchsPath) {
  const torch::Tensor recon = torch::randn({3, 5}, torch::kDouble), target = torch::randn({3, 5}, torch::kDouble);
  const torch::Tensor mse = RowMeanSquaredError(recon, target);
  EXPECT_EQ(mse.scalar_type(), torch::kDouble);
  EXPECT_TRUE(torch::allclose(mse, ReferenceMse(recon, target)));
  const torch::Tensor kl = RowGaussianKl(recon, target);
  EXPECT_EQ(kl.scalar_type(), torch::kDouble);
  EXPECT_TRUE(torch::allclose(kl, ReferenceKl(recon, target)));
  const torch::Tensor loss = WeightedBatchMean(mse, kl, 0.25);
  EXPECT_EQ(loss.scalar_type(), torch::kDouble);
  EXPECT_TRUE(torch::allclose(loss, mse.mean() + 0.25 * kl.mean()));
}

}  // namespace
}  // namespace ct
