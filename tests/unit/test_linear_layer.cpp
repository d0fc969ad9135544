// model/linear_layer: the CPU fast path of Linear(+ReLU) gives LibTorch's numbers (in float32 and
// under bf16 autocast), adds the parameters' gradients into an existing .grad as AccumulateGrad
// would, and still runs the AccumulateGrad post-hooks that GradientSync launches buckets from.
#include <gtest/gtest.h>
#include <torch/csrc/autograd/function.h>
#include <torch/csrc/autograd/variable.h>
#include <torch/nn/functional/linear.h>
#include <torch/torch.h>

#include <cmath>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "expect_close.h"
#include "model/linear_layer.h"
#include "model/precision.h"
#include "model/stale_gradients.h"

namespace ct {
namespace {

struct Grads {
  torch::Tensor y, x, weight, bias;
};

// One forward and backward of `layer` on `x`, with the loss sum(y * w) (a gradient that differs
// per element); `fast` picks LinearLayer or LibTorch's own linear and relu; `bf16`: the forward
// under bf16 autocast (train.precision=bf16).
Grads ForwardBackward(torch::nn::Linear& layer, const torch::Tensor& x_in, bool relu, bool fast, bool x_grad,
                      bool bf16 = false) {
  torch::Tensor x = x_in.detach().clone().requires_grad_(x_grad);
  torch::Tensor y;
  {
    AutocastScope autocast(bf16, c10::kCPU);
    y = fast ? LinearLayer(layer, x, relu) : torch::nn::functional::linear(x, layer->weight, layer->bias);
    if (!fast && relu) y = torch::relu(y);
  }
  (y.to(torch::kFloat) * torch::linspace(-1, 2, y.numel()).view_as(y)).sum().backward();
  return {y.detach(), x_grad ? x.grad() : torch::Tensor(), layer->weight.grad().clone(), layer->bias.grad().clone()};
}

// Two layers with the same weights: one for LinearLayer, one for LibTorch's own linear.
std::pair<torch::nn::Linear, torch::nn::Linear> TwinLayers(int64_t in, int64_t out) {
  torch::nn::Linear fast(in, out), plain(in, out);
  torch::NoGradGuard no_grad;
  plain->weight.copy_(fast->weight);
  plain->bias.copy_(fast->bias);
  return {fast, plain};
}

// A gradient may be absent in both (an input that needs none).
void ExpectLinearClose(const torch::Tensor& a, const torch::Tensor& b, const char* what) {
  ASSERT_EQ(a.defined(), b.defined()) << what;
  if (a.defined()) test::ExpectClose(a, b, what, {1e-5, 1e-6});
}

TEST(LinearLayer, EqualsLibTorchsLinearAndReluWithAndWithoutAnExistingGrad) {
  for (bool relu : {true, false}) {
    for (bool x_grad : {true, false}) {
      for (bool existing_grad : {false, true}) {
        torch::manual_seed(3);
        auto [fast, plain] = TwinLayers(37, 19);
        if (existing_grad) {  // accumulation: the new gradient is added to what is there
          for (auto* layer : {&fast, &plain}) {
            (*layer)->weight.mutable_grad() = torch::full({19, 37}, 0.25);
            (*layer)->bias.mutable_grad() = torch::full({19}, -0.5);
          }
        }
        const torch::Tensor x = torch::randn({11, 37});
        const Grads a = ForwardBackward(fast, x, relu, /*fast=*/true, x_grad);
        const Grads b = ForwardBackward(plain, x, relu, /*fast=*/false, x_grad);
        SCOPED_TRACE(std::string("relu ") + (relu ? "on" : "off") + ", x grad " + (x_grad ? "on" : "off") +
                     ", existing grad " + (existing_grad ? "yes" : "no"));
        ExpectLinearClose(a.y, b.y, "output");
        ExpectLinearClose(a.x, b.x, "input gradient");
        ExpectLinearClose(a.weight, b.weight, "weight gradient");
        ExpectLinearClose(a.bias, b.bias, "bias gradient");
      }
    }
  }
}

TEST(LinearLayer, AddsIntoTheExistingGradInPlaceAndStillRunsAccumulateGradsPostHooks) {
  struct Count : torch::autograd::FunctionPostHook {
    explicit Count(int* n) : calls(n) {}
    torch::autograd::variable_list operator()(const torch::autograd::variable_list& outputs,
                                              const torch::autograd::variable_list&) override {
      ++*calls;
      return outputs;
    }
    int* calls;
  };
  torch::nn::Linear layer(8, 4);
  int weight_hooks = 0, bias_hooks = 0;
  // Held, as GradientSync holds them: a tensor keeps only a weak reference to its accumulator.
  const auto weight_accumulator = torch::autograd::impl::grad_accumulator(layer->weight);
  const auto bias_accumulator = torch::autograd::impl::grad_accumulator(layer->bias);
  weight_accumulator->add_post_hook(std::make_unique<Count>(&weight_hooks));
  bias_accumulator->add_post_hook(std::make_unique<Count>(&bias_hooks));
  layer->weight.mutable_grad() = torch::zeros({4, 8});
  layer->bias.mutable_grad() = torch::zeros({4});
  const void* weight_grad_storage = layer->weight.grad().data_ptr();
  for (int step = 1; step <= 3; ++step) {
    LinearLayer(layer, torch::randn({5, 8}), /*relu=*/true).sum().backward();
    EXPECT_EQ(weight_hooks, step);
    EXPECT_EQ(bias_hooks, step);
  }
  // Still the same tensor: a bucket view stays a bucket view.
  EXPECT_EQ(layer->weight.grad().data_ptr(), weight_grad_storage);
}

// Float32: the output and input gradient are LibTorch's bit for bit, and so is what reaches a
// .grad that is absent or stale (the products go to the same BLAS routine with the same
// arguments: model/cpu_sgemm.h). Odd sizes, and the demo's widest layer (128 x 1024 -> 512).
TEST(LinearLayer, InFloat32GivesLibTorchsNumbersBitForBit) {
  for (const std::vector<int64_t>& s : std::vector<std::vector<int64_t>>{{11, 37, 19}, {1, 5, 3}, {128, 1024, 512}}) {
    for (bool relu : {true, false}) {
      for (bool stale_grad : {false, true}) {
        torch::manual_seed(10);
        auto [fast, plain] = TwinLayers(s[1], s[2]);
        std::unique_ptr<StaleGradients> stale;
        if (stale_grad) {
          fast->weight.mutable_grad() = torch::full({s[2], s[1]}, std::nanf(""));
          fast->bias.mutable_grad() = torch::full({s[2]}, std::nanf(""));
          stale = std::make_unique<StaleGradients>(std::vector<torch::Tensor>{fast->weight, fast->bias});
          stale->MarkAll();
        }
        const torch::Tensor x = torch::randn({s[0], s[1]});
        const Grads a = ForwardBackward(fast, x, relu, /*fast=*/true, /*x_grad=*/true);
        const Grads b = ForwardBackward(plain, x, relu, /*fast=*/false, /*x_grad=*/true);
        SCOPED_TRACE(std::to_string(s[0]) + "x" + std::to_string(s[1]) + " -> " + std::to_string(s[2]) + ", relu " +
                     (relu ? "on" : "off") + (stale_grad ? ", stale .grad" : ", no .grad"));
        EXPECT_TRUE(torch::equal(a.y, b.y));
        EXPECT_TRUE(torch::equal(a.x, b.x));
        EXPECT_TRUE(torch::equal(a.weight, b.weight));
        EXPECT_TRUE(torch::equal(a.bias, b.bias));
      }
    }
  }
}

// A layer as wide as the demo's, with some pre-activations exactly 0 (where ReLU's gradient is 0,
// as threshold_backward has it): LibTorch's gradients.
TEST(LinearLayer, WideLayersWithPreActivationsOfExactlyZeroGiveLibTorchsGradients) {
  torch::manual_seed(5);
  auto [fast, plain] = TwinLayers(64, 600);
  {
    torch::NoGradGuard no_grad;  // with the rows of x below that are 0: pre-activations of exactly 0
    fast->bias.zero_();
    plain->bias.zero_();
  }
  torch::Tensor x = torch::randn({130, 64});
  x.index_put_({torch::indexing::Slice(0, 3)}, 0);
  const Grads a = ForwardBackward(fast, x, /*relu=*/true, /*fast=*/true, /*x_grad=*/true);
  const Grads b = ForwardBackward(plain, x, /*relu=*/true, /*fast=*/false, /*x_grad=*/true);
  ExpectLinearClose(a.x, b.x, "input gradient");
  ExpectLinearClose(a.weight, b.weight, "weight gradient");
  ExpectLinearClose(a.bias, b.bias, "bias gradient");
}

// The weight's gradient of a penalty on the input gradient (as in gradient-penalty training),
// through LinearLayer and through LibTorch's linear and relu: {fast, plain}.
std::vector<torch::Tensor> PenaltyWeightGradients(uint64_t seed, bool bf16) {
  torch::manual_seed(seed);
  auto [fast, plain] = TwinLayers(12, 9);
  const torch::Tensor x0 = torch::randn({7, 12});
  std::vector<torch::Tensor> weight_grads;
  for (bool use_fast : {true, false}) {
    torch::nn::Linear& layer = use_fast ? fast : plain;
    const torch::Tensor x = x0.clone().requires_grad_(true);
    torch::Tensor y;
    {
      AutocastScope autocast(bf16, c10::kCPU);
      y = use_fast ? LinearLayer(layer, x, /*relu=*/true)
                   : torch::relu(torch::nn::functional::linear(x, layer->weight, layer->bias));
    }
    const torch::Tensor yf = y.to(torch::kFloat);
    const torch::Tensor dx = torch::autograd::grad({(yf * yf).sum()}, {x}, {}, /*retain_graph=*/true,
                                                   /*create_graph=*/true)[0];
    dx.pow(2).sum().backward();
    weight_grads.push_back(layer->weight.grad().clone());
  }
  return weight_grads;
}

// Under create_graph the layer's backward is differentiable itself: a gradient of the gradient
// equals LibTorch's.
TEST(LinearLayer, SecondOrderGradientsEqualLibTorchs) {
  const std::vector<torch::Tensor> weight_grads = PenaltyWeightGradients(6, /*bf16=*/false);
  ExpectLinearClose(weight_grads[0], weight_grads[1], "weight gradient of the input-gradient penalty");
}

// train.precision=bf16: the products run in bfloat16 (the layer's own path, not LibTorch's casts
// and nodes), and what reaches the float32 .grad, or is returned for it, is LibTorch's bit for
// bit: replaced where stale, added where it accumulates.
TEST(LinearLayer, UnderBf16AutocastGivesLibTorchsNumbersBitForBit) {
  for (bool relu : {true, false}) {
    for (bool x_grad : {true, false}) {
      for (int grad_state : {0, 1, 2}) {  // no .grad yet; one to add to; a stale one to replace
        torch::manual_seed(4);
        auto [fast, plain] = TwinLayers(16, 8);
        std::unique_ptr<StaleGradients> stale;
        if (grad_state > 0) {
          for (auto* layer : {&fast, &plain}) {
            (*layer)->weight.mutable_grad() = torch::full({8, 16}, 0.25);
            (*layer)->bias.mutable_grad() = torch::full({8}, -0.5);
          }
        }
        if (grad_state == 2) {
          for (const torch::Tensor& g : {fast->weight.grad(), fast->bias.grad()}) g.fill_(std::nanf(""));
          for (const torch::Tensor& g : {plain->weight.grad(), plain->bias.grad()}) g.zero_();
          stale = std::make_unique<StaleGradients>(std::vector<torch::Tensor>{fast->weight, fast->bias});
          stale->MarkAll();
        }
        const torch::Tensor x = torch::randn({4, 16});
        const Grads a = ForwardBackward(fast, x, relu, /*fast=*/true, x_grad, /*bf16=*/true);
        const Grads b = ForwardBackward(plain, x, relu, /*fast=*/false, x_grad, /*bf16=*/true);
        SCOPED_TRACE(std::string("relu ") + (relu ? "on" : "off") + ", x grad " + (x_grad ? "on" : "off") +
                     ", grad state " + std::to_string(grad_state));
        EXPECT_EQ(a.y.scalar_type(), torch::kBFloat16);
        EXPECT_TRUE(torch::equal(a.y, b.y));
        if (x_grad) {
          EXPECT_EQ(a.x.scalar_type(), torch::kFloat);
          EXPECT_TRUE(torch::equal(a.x, b.x));
        }
        EXPECT_EQ(a.weight.scalar_type(), torch::kFloat);
        EXPECT_TRUE(torch::equal(a.weight, b.weight)) << a.weight - b.weight;
        EXPECT_TRUE(torch::equal(a.bias, b.bias)) << a.bias - b.bias;
      }
    }
  }
}

TEST(LinearLayer, UnderBf16AutocastTheLayerRunsItsOwnPath) {
  torch::nn::Linear layer(6, 3);
  AutocastScope bf16(/*enabled=*/true, c10::kCPU);
  for (const torch::Tensor& x : {torch::randn({2, 6}), torch::randn({2, 6}).to(torch::kBFloat16)}) {
    const torch::Tensor y = LinearLayer(layer, x, /*relu=*/true);
    EXPECT_NE(y.grad_fn()->name().find("LinearFunction"), std::string::npos) << y.grad_fn()->name();
  }
}

// A gradient penalty under bf16 autocast: the backward that builds a graph must reach x and W
// through the bfloat16 casts, as LibTorch's does.
TEST(LinearLayer, UnderBf16AutocastSecondOrderGradientsEqualLibTorchs) {
  const std::vector<torch::Tensor> weight_grads = PenaltyWeightGradients(7, /*bf16=*/true);
  // The same terms, rounded to bfloat16 in another order: equal to bfloat16's precision.
  const float scale = weight_grads[1].abs().max().item<float>();
  const float diff = (weight_grads[0] - weight_grads[1]).abs().max().item<float>();
  EXPECT_GT(scale, 0);
  EXPECT_LE(diff, 0.01 * scale) << "max |diff| " << diff << " of max " << scale;
}

}  // namespace
}  // namespace ct
