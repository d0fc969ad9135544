// model/stale_gradients: a CPU step that marks its gradients stale instead of zeroing them gets
// the same gradients as one that zeroes first, whoever writes them: LinearLayer's products
// written over the old values, AccumulateGrad's gradients (copied over the old values), a weight
// used twice, a parameter the backward does not use, micro-batches that accumulate, and a
// backward that builds a graph.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <limits>
#include <vector>

#include "model/linear_layer.h"
#include "model/stale_gradients.h"

namespace ct {
namespace {

// Parameters reached by each kind of writer: `w`, `b` through LinearLayer's CPU path (used twice,
// as a tied weight), `w` also through a plain op (so AccumulateGrad adds after the layer wrote),
// `scale` only through plain ops, and `unused` by nothing.
struct Params {
  torch::Tensor w, b, scale, unused;
  std::vector<torch::Tensor> All() const { return {w, b, scale, unused}; }
};

Params MakeParams() {
  torch::manual_seed(5);
  return {torch::randn({8, 8}).requires_grad_(), torch::randn({8}).requires_grad_(), torch::randn({8}).requires_grad_(),
          torch::randn({3}).requires_grad_()};
}

torch::Tensor Loss(const Params& p, const torch::Tensor& x) {
  torch::Tensor h = LinearLayer(x, p.w, p.b, /*relu=*/true);
  h = LinearLayer(h * p.scale, p.w, p.b, /*relu=*/false);
  return (h * torch::linspace(-1, 1, h.numel()).view_as(h)).sum() + p.w.square().sum() * 0.1;
}

// What each parameter's .grad holds after `micro_batches` backwards, starting from zero.
std::vector<torch::Tensor> ReferenceGradients(const std::vector<torch::Tensor>& xs) {
  const Params p = MakeParams();
  for (const torch::Tensor& t : p.All()) t.mutable_grad() = torch::zeros_like(t);
  for (const torch::Tensor& x : xs) Loss(p, x).backward();
  std::vector<torch::Tensor> grads;
  for (const torch::Tensor& t : p.All()) grads.push_back(t.grad().clone());
  return grads;
}

// The same from .grad full of NaN (last step's values, which must be neither read nor added to).
std::vector<torch::Tensor> GradientsFromStale(const std::vector<torch::Tensor>& xs) {
  const Params p = MakeParams();
  for (const torch::Tensor& t : p.All()) {
    t.mutable_grad() = torch::full_like(t, std::numeric_limits<float>::quiet_NaN());
  }
  StaleGradients stale(p.All());
  stale.MarkAll();
  for (const torch::Tensor& x : xs) Loss(p, x).backward();
  stale.ZeroUnwritten();
  std::vector<torch::Tensor> grads;
  for (const torch::Tensor& t : p.All()) grads.push_back(t.grad().clone());
  return grads;
}

void ExpectSameGradients(const std::vector<torch::Tensor>& got, const std::vector<torch::Tensor>& want) {
  const char* names[] = {"w", "b", "scale", "unused"};
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_TRUE(torch::allclose(got[i], want[i], 1e-6, 1e-6)) << names[i] << ": " << got[i] << " vs " << want[i];
  }
}

TEST(StaleGradients, OneBackwardGivesTheGradientsOfAZeroedStart) {
  torch::manual_seed(1);
  const std::vector<torch::Tensor> xs = {torch::randn({6, 8})};
  const std::vector<torch::Tensor> got = GradientsFromStale(xs);
  ExpectSameGradients(got, ReferenceGradients(xs));
  EXPECT_TRUE(torch::equal(got[3], torch::zeros({3}))) << "a parameter the backward did not use";
}

TEST(StaleGradients, LaterMicroBatchesAddToTheFirst) {
  torch::manual_seed(2);
  const std::vector<torch::Tensor> xs = {torch::randn({6, 8}), torch::randn({4, 8}), torch::randn({5, 8})};
  ExpectSameGradients(GradientsFromStale(xs), ReferenceGradients(xs));
}

TEST(StaleGradients, EachMarkStartsAStepOfItsOwn) {
  const Params p = MakeParams();
  for (const torch::Tensor& t : p.All()) t.mutable_grad() = torch::zeros_like(t);
  StaleGradients stale(p.All());
  torch::manual_seed(3);
  const torch::Tensor first = torch::randn({6, 8}), second = torch::randn({6, 8});
  for (const torch::Tensor& x : {first, second}) {
    stale.MarkAll();
    Loss(p, x).backward();
    stale.ZeroUnwritten();
  }
  ExpectSameGradients({p.w.grad(), p.b.grad(), p.scale.grad(), p.unused.grad()}, ReferenceGradients({second}));
}

TEST(StaleGradients, WithoutAMarkGradientsAreAddedToAsBefore) {
  const Params p = MakeParams();
  for (const torch::Tensor& t : p.All()) t.mutable_grad() = torch::ones_like(t);
  torch::manual_seed(4);
  const torch::Tensor x = torch::randn({6, 8});
  {
    StaleGradients stale(p.All());  // tracked, never marked
    Loss(p, x).backward();
  }
  Loss(p, x).backward();  // the hooks are gone with it
  const std::vector<torch::Tensor> once = ReferenceGradients({x});
  ExpectSameGradients({p.w.grad(), p.b.grad(), p.scale.grad(), p.unused.grad()},
                      {1 + 2 * once[0], 1 + 2 * once[1], 1 + 2 * once[2], torch::ones({3})});
}

TEST(StaleGradients, ABackwardThatBuildsAGraphKeepsItInTheGradients) {
  const Params p = MakeParams();
  for (const torch::Tensor& t : p.All()) {
    t.mutable_grad() = torch::full_like(t, std::numeric_limits<float>::quiet_NaN());
  }
  torch::manual_seed(6);
  const torch::Tensor x = torch::randn({6, 8});
  StaleGradients stale(p.All());
  stale.MarkAll();
  Loss(p, x).backward({}, /*retain_graph=*/true, /*create_graph=*/true);
  stale.ZeroUnwritten();
  // AccumulateGrad adds out of place here, so that the gradient can be differentiated again.
  EXPECT_TRUE(p.scale.grad().requires_grad()) << "a copy over the stale .grad would drop its graph";
  ExpectSameGradients({p.w.grad().detach(), p.b.grad().detach(), p.scale.grad().detach(), p.unused.grad()},
                      ReferenceGradients({x}));
  // A .grad with a graph holds its parameter: dropped, or the two would never be freed.
  for (const torch::Tensor& t : p.All()) t.mutable_grad() = torch::Tensor();
}

TEST(StaleGradients, AParameterIsTrackedByOneAtATime) {
  const Params p = MakeParams();
  {
    StaleGradients first(p.All());
    EXPECT_THROW(StaleGradients second({p.scale}), std::exception);
  }
  EXPECT_NO_THROW(StaleGradients again(p.All()));                            // the first forgot its parameters
  EXPECT_THROW(StaleGradients frozen({torch::zeros({2})}), std::exception);  // requires no grad
}

}  // namespace
}  // namespace ct
