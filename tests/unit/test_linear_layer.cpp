// model/linear_layer: the CPU fast path of Linear(+ReLU) gives LibTorch's numbers, adds the
// parameters' gradients into an existing .grad as AccumulateGrad would, and still runs the
// AccumulateGrad post-hooks that GradientSync launches buckets from.
#include <gtest/gtest.h>
#include <torch/csrc/autograd/function.h>
#include <torch/csrc/autograd/variable.h>
#include <torch/nn/functional/linear.h>
#include <torch/torch.h>

#include <utility>

#include "model/linear_layer.h"
#include "model/precision.h"

namespace ct {
namespace {

struct Grads {
  torch::Tensor y, x, weight, bias;
};

// One forward and backward of `layer` on `x`, with the loss sum(y * w) (a gradient that differs
// per element); `fast` picks LinearLayer or LibTorch's own linear and relu.
Grads ForwardBackward(torch::nn::Linear& layer, const torch::Tensor& x_in, bool relu, bool fast, bool x_grad) {
  torch::Tensor x = x_in.detach().clone().requires_grad_(x_grad);
  torch::Tensor y = fast ? LinearLayer(layer, x, relu) : torch::nn::functional::linear(x, layer->weight, layer->bias);
  if (!fast && relu) y = torch::relu(y);
  (y * torch::linspace(-1, 2, y.numel()).view_as(y)).sum().backward();
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

void ExpectClose(const torch::Tensor& a, const torch::Tensor& b, const char* what) {
  ASSERT_EQ(a.defined(), b.defined()) << what;
  if (a.defined()) {
    EXPECT_TRUE(torch::allclose(a, b, 1e-5, 1e-6)) << what << ": max |diff| " << (a - b).abs().max();
  }
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
        ExpectClose(a.y, b.y, "output");
        ExpectClose(a.x, b.x, "input gradient");
        ExpectClose(a.weight, b.weight, "weight gradient");
        ExpectClose(a.bias, b.bias, "bias gradient");
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
  ExpectClose(a.x, b.x, "input gradient");
  ExpectClose(a.weight, b.weight, "weight gradient");
  ExpectClose(a.bias, b.bias, "bias gradient");
}

// Under create_graph the layer's backward is differentiable itself: a gradient of the gradient
// (a penalty on the input gradient, as in gradient-penalty training) equals LibTorch's.
TEST(LinearLayer, SecondOrderGradientsEqualLibTorchs) {
  torch::manual_seed(6);
  auto [fast, plain] = TwinLayers(12, 9);
  const torch::Tensor x0 = torch::randn({7, 12});
  std::vector<torch::Tensor> weight_grads;
  for (bool use_fast : {true, false}) {
    torch::nn::Linear& layer = use_fast ? fast : plain;
    const torch::Tensor x = x0.clone().requires_grad_(true);
    torch::Tensor y = use_fast ? LinearLayer(layer, x, /*relu=*/true)
                               : torch::relu(torch::nn::functional::linear(x, layer->weight, layer->bias));
    const torch::Tensor dx = torch::autograd::grad({(y * y).sum()}, {x}, {}, /*retain_graph=*/true,
                                                   /*create_graph=*/true)[0];
    dx.pow(2).sum().backward();
    weight_grads.push_back(layer->weight.grad().clone());
  }
  ExpectClose(weight_grads[0], weight_grads[1], "weight gradient of the input-gradient penalty");
}

TEST(LinearLayer, UnderBf16AutocastTheGradientStaysFloat32AndEqualsLibTorchs) {
  // train.precision=bf16: the product runs in bfloat16, the gradient that reaches a float32
  // .grad must be added as AccumulateGrad adds it (LibTorch's path).
  torch::manual_seed(4);
  auto [fast, plain] = TwinLayers(16, 8);
  const torch::Tensor x = torch::randn({4, 16});
  torch::Tensor y_fast, y_plain;
  for (auto* layer : {&fast, &plain}) {
    (*layer)->weight.mutable_grad() = torch::zeros({8, 16});
    (*layer)->bias.mutable_grad() = torch::zeros({8});
  }
  {
    AutocastScope bf16(/*enabled=*/true, c10::kCPU);
    y_fast = LinearLayer(fast, x, /*relu=*/true);
    y_plain = torch::relu(torch::nn::functional::linear(x, plain->weight, plain->bias));
  }
  y_fast.to(torch::kFloat).sum().backward();
  y_plain.to(torch::kFloat).sum().backward();
  EXPECT_EQ(y_fast.scalar_type(), torch::kBFloat16);
  EXPECT_EQ(fast->weight.grad().scalar_type(), torch::kFloat);
  EXPECT_TRUE(torch::equal(fast->weight.grad(), plain->weight.grad()));
  EXPECT_TRUE(torch::equal(fast->bias.grad(), plain->bias.grad()));
}

}  // namespace
}  // namespace ct
