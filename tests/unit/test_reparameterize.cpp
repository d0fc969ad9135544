// model/reparameterize: the VAE's latent sample mu + eps * exp(logvar / 2), one autograd node on
// the CPU, gives LibTorch's numbers and gradients bit for bit (and its second-order gradient) on
// the column halves of one encoder output, as the models pass it, and falls back to LibTorch's
// ops elsewhere.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "expect_close.h"
#include "model/reparameterize.h"

namespace ct {
namespace {

torch::Tensor Reference(const torch::Tensor& mu, const torch::Tensor& logvar, const torch::Tensor& eps) {
  return mu + eps * torch::exp(0.5 * logvar);
}

// The same numbers bit for bit: a 1-ulp difference in the latent sample, amplified by Adam, moved
// the demo's losses by 4e-4 relative within an epoch.
void ExpectEqual(const torch::Tensor& a, const torch::Tensor& b, const std::string& what) {
  ASSERT_TRUE(a.defined() && b.defined()) << what;
  ASSERT_EQ(a.sizes(), b.sizes()) << what;
  EXPECT_TRUE(torch::equal(a, b)) << what << ": max |diff| " << (a - b).abs().max().item<float>();
}

// A second-order gradient takes LibTorch's ops in both (a graph of the backward), in another order.
void ExpectSecondOrderClose(const torch::Tensor& a, const torch::Tensor& b, const std::string& what) {
  test::ExpectClose(a, b, what, {1e-5, 1e-6});
}

TEST(Reparameterize, EqualsLibTorchsInValueAndGradientOnTheHalvesOfOneEncoderOutput) {
  for (const auto& [rows, latent] : std::vector<std::pair<int64_t, int64_t>>{{1, 1}, {7, 3}, {128, 16}}) {
    SCOPED_TRACE(std::to_string(rows) + " x " + std::to_string(latent));
    torch::manual_seed(13);
    const torch::Tensor h0 = torch::randn({rows, 2 * latent}) * 2, eps = torch::randn({rows, latent});
    const torch::Tensor upstream = torch::randn({rows, latent});  // a different weight per element
    torch::Tensor fast_h = h0.clone().requires_grad_(true), plain_h = h0.clone().requires_grad_(true);
    const std::vector<torch::Tensor> f = fast_h.chunk(2, 1), p = plain_h.chunk(2, 1);
    const torch::Tensor fast = Reparameterize(f[0], f[1], eps);
    const torch::Tensor plain = Reference(p[0], p[1], eps);
    ExpectEqual(fast, plain, "value");
    ASSERT_NE(fast.grad_fn(), nullptr);
    EXPECT_NE(fast.grad_fn()->name().find("Reparameterize"), std::string::npos) << fast.grad_fn()->name();
    (fast * upstream).sum().backward();
    (plain * upstream).sum().backward();
    ExpectEqual(fast_h.grad(), plain_h.grad(), "gradient");
  }
}

TEST(Reparameterize, SecondOrderGradientEqualsLibTorchs) {
  torch::manual_seed(14);
  const torch::Tensor h0 = torch::randn({5, 8}), eps = torch::randn({5, 4});
  std::vector<torch::Tensor> second;
  for (bool fast : {true, false}) {
    torch::Tensor h = h0.clone().requires_grad_(true);
    const std::vector<torch::Tensor> halves = h.chunk(2, 1);
    const torch::Tensor z = fast ? Reparameterize(halves[0], halves[1], eps) : Reference(halves[0], halves[1], eps);
    const auto grads = torch::autograd::grad({z.pow(2).sum()}, {h}, {}, /*retain_graph=*/true, /*create_graph=*/true);
    grads[0].pow(2).sum().backward();
    second.push_back(h.grad());
  }
  ExpectSecondOrderClose(second[0], second[1], "second-order gradient");
}

TEST(Reparameterize, NoiseThatNeedsAGradientAndOtherDtypesTakeLibTorchsPath) {
  torch::manual_seed(15);
  const torch::Tensor mu = torch::randn({3, 4}), logvar = torch::randn({3, 4});
  torch::Tensor eps = torch::randn({3, 4}, torch::requires_grad());
  Reparameterize(mu, logvar, eps).sum().backward();
  ASSERT_TRUE(eps.grad().defined());
  ExpectEqual(eps.grad(), torch::exp(0.5 * logvar), "noise gradient");
  const torch::Tensor d = torch::randn({3, 4}, torch::kDouble);
  const torch::Tensor z = Reparameterize(d, d, d);
  EXPECT_EQ(z.scalar_type(), torch::kDouble);
  ExpectEqual(z, Reference(d, d, d), "double");
}

}  // namespace
}  // namespace ct
