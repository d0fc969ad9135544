// model/conv_layer: Conv1d and ConvTranspose1d (the latter as the adjoint of a Conv1d) with
// ReLU in place give LibTorch's own modules' outputs and gradients, over several geometries, in
// float32 and under bf16 autocast, and leave their outputs in channels-last memory; the
// vae_conv1d model built on them (its Linear weights permuted to that memory order) gives the
// gradients of LibTorch's modules.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "expect_close.h"
#include "model/conv_layer.h"
#include "model/precision.h"
#include "model/vae_conv1d.h"

namespace ct {
namespace {

struct Geometry {
  int64_t in_channels, out_channels, kernel, stride, length;
};

const std::vector<Geometry> kGeometries = {
    {1, 16, 7, 2, 1024}, {3, 5, 3, 1, 37}, {4, 6, 4, 3, 50}, {2, 2, 5, 2, 9}, {8, 3, 1, 1, 16}};

// Convolutions sum in another order than LibTorch's.
void ExpectConvClose(const torch::Tensor& a, const torch::Tensor& b, const std::string& what) {
  test::ExpectClose(a, b, what, {1e-4, 1e-5});
}

// The loss sum(y * ramp): a gradient that differs per element.
torch::Tensor Loss(const torch::Tensor& y) { return (y * torch::linspace(-1, 2, y.numel()).view_as(y)).sum(); }

// Forward and backward through `fast` and through the module `plain` (same weights, ReLU after),
// comparing the output and the gradients of the input, weight and bias.
template <typename Module, typename Fast>
void CompareWithLibTorch(Module& module, const torch::Tensor& x_values, bool relu, Fast fast, const std::string& what,
                         bool channels_last = true) {
  torch::Tensor x1 = x_values.clone().requires_grad_(true), x2 = x_values.clone().requires_grad_(true);
  const torch::Tensor y1 = fast(module, x1, relu);
  // Channels-last (NWC) memory, the layout model/vae_conv1d.cpp reads off the activations.
  if (channels_last && y1.size(1) > 1) {
    EXPECT_EQ(y1.stride(1), 1) << what << ": output strides " << y1.strides();
  }
  Loss(y1).backward();
  const torch::Tensor w1 = module->weight.grad().clone(), b1 = module->bias.grad().clone();
  module->weight.mutable_grad() = torch::Tensor();
  module->bias.mutable_grad() = torch::Tensor();
  torch::Tensor y2 = module->forward(x2);
  if (relu) y2 = torch::relu(y2);
  Loss(y2).backward();
  ExpectConvClose(y1, y2, what + " output");
  ExpectConvClose(x1.grad(), x2.grad(), what + " input gradient");
  ExpectConvClose(w1, module->weight.grad(), what + " weight gradient");
  ExpectConvClose(b1, module->bias.grad(), what + " bias gradient");
}

TEST(ConvLayer, Conv1dEqualsLibTorchsWithAndWithoutRelu) {
  for (const Geometry& g : kGeometries) {
    for (bool relu : {true, false}) {
      torch::manual_seed(7);
      torch::nn::Conv1d conv(
          torch::nn::Conv1dOptions(g.in_channels, g.out_channels, g.kernel).stride(g.stride).padding(g.kernel / 2));
      const torch::Tensor x = torch::randn({3, g.in_channels, g.length});
      CompareWithLibTorch(conv, x, relu, Conv1dLayer,
                          "Conv1d " + std::to_string(g.in_channels) + "->" + std::to_string(g.out_channels) + " k" +
                              std::to_string(g.kernel) + " s" + std::to_string(g.stride) + (relu ? " relu" : ""));
    }
  }
}

TEST(ConvLayer, ConvTranspose1dEqualsLibTorchsForEveryOutputPadding) {
  for (const Geometry& g : kGeometries) {
    for (int64_t output_padding = 0; output_padding < g.stride; ++output_padding) {
      torch::manual_seed(8);
      torch::nn::ConvTranspose1d deconv(torch::nn::ConvTranspose1dOptions(g.out_channels, g.in_channels, g.kernel)
                                            .stride(g.stride)
                                            .padding(g.kernel / 2)
                                            .output_padding(output_padding));
      const torch::Tensor x = torch::randn({3, g.out_channels, g.length / g.stride + 1});
      for (bool relu : {true, false}) {
        CompareWithLibTorch(deconv, x, relu, ConvTranspose1dLayer,
                            "ConvTranspose1d " + std::to_string(g.out_channels) + "->" + std::to_string(g.in_channels) +
                                " k" + std::to_string(g.kernel) + " s" + std::to_string(g.stride) + " output_padding " +
                                std::to_string(output_padding) + (relu ? " relu" : ""));
        deconv->weight.mutable_grad() = torch::Tensor();
        deconv->bias.mutable_grad() = torch::Tensor();
      }
    }
  }
}

// The whole model on the CPU path against the same weights in double precision, where every
// layer is LibTorch's own module and the activations stay [B, C, L] in memory.
TEST(ConvLayer, VaeConv1dOnTheCpuPathGivesTheGradientsOfLibTorchsModules) {
  torch::manual_seed(11);
  const Conv1dShape shape{{64}, {4, 8, 6}, 5, 2, 3};
  VaeConv1d fast(shape), plain(shape);
  plain->to(torch::kDouble);
  {
    torch::NoGradGuard no_grad;
    for (size_t i = 0; i < fast->parameters().size(); ++i) plain->parameters()[i].copy_(fast->parameters()[i]);
  }
  const torch::Tensor x = torch::randn({5, 64}), eps = torch::randn({5, 3});
  const VaeOutput a = fast->forward(x, eps);
  const VaeOutput b = plain->forward(x.to(torch::kDouble), eps.to(torch::kDouble));
  (Loss(a.recon) + Loss(a.mu) + Loss(a.logvar)).backward();
  (Loss(b.recon) + Loss(b.mu) + Loss(b.logvar)).backward();
  ExpectConvClose(a.recon, b.recon.to(torch::kFloat), "recon");
  ExpectConvClose(a.mu, b.mu.to(torch::kFloat), "mu");
  const auto names = fast->named_parameters();
  for (size_t i = 0; i < names.size(); ++i) {
    ExpectConvClose(names[i].value().grad(), plain->parameters()[i].grad().to(torch::kFloat),
                    names[i].key() + " gradient");
  }
}

// Equal to bfloat16's precision: both sides round the same products to bfloat16, in kernels that
// may sum in another order.
void ExpectCloseInBf16(const torch::Tensor& a, const torch::Tensor& b, const std::string& what) {
  ASSERT_EQ(a.sizes(), b.sizes()) << what;
  ASSERT_EQ(a.scalar_type(), b.scalar_type()) << what;
  const float scale = b.abs().max().item<float>(), diff = (a - b).abs().max().item<float>();
  EXPECT_LE(diff, 0.02 * scale) << what << ": max |diff| " << diff << " of max " << scale;
}

// Under bf16 autocast (train.precision=bf16): the layer's own path (its node in the graph), a
// bfloat16 output, and, to bfloat16's precision, the numbers of LibTorch's convolution of the
// input, weight and bias rounded to bfloat16 (as autocast casts them), summed in float32 (as
// oneDNN's bfloat16 kernels sum) and rounded to bfloat16; the float32 input's and parameters'
// gradients in float32. (The reference sums in float32 because LibTorch 1.13's bfloat16
// conv_transpose1d fails on the CPU, and its autocast leaves that op in float32.)
template <typename Module, typename Fast, typename Reference>
void CompareWithBf16Reference(Module& module, const torch::Tensor& x_values, bool relu, Fast fast, Reference reference,
                              const std::string& what, const std::string& node) {
  torch::Tensor x1 = x_values.clone().requires_grad_(true), x2 = x_values.clone().requires_grad_(true);
  torch::Tensor y1;
  {
    AutocastScope bf16(/*enabled=*/true, c10::kCPU);
    y1 = fast(module, x1, relu);
  }
  EXPECT_NE(y1.grad_fn()->name().find(node), std::string::npos) << what << ": " << y1.grad_fn()->name();
  EXPECT_EQ(y1.scalar_type(), torch::kBFloat16) << what;
  Loss(y1.to(torch::kFloat)).backward();
  const torch::Tensor w1 = module->weight.grad().clone(), b1 = module->bias.grad().clone();
  module->weight.mutable_grad() = torch::Tensor();
  module->bias.mutable_grad() = torch::Tensor();
  const auto rounded = [](const torch::Tensor& t) { return t.to(torch::kBFloat16).to(torch::kFloat); };
  torch::Tensor y2 = reference(rounded(x2), rounded(module->weight), rounded(module->bias)).to(torch::kBFloat16);
  // ReLU with the layer's own mask: an output within rounding of 0 may fall on either side of it
  // in two kernels, and then the whole gradient there differs.
  if (relu) y2 = y2 * (y1.detach() > 0).to(y2.scalar_type());
  Loss(y2.to(torch::kFloat)).backward();
  ExpectCloseInBf16(y1, y2, what + " output");
  ExpectCloseInBf16(x1.grad(), x2.grad(), what + " input gradient");
  ExpectCloseInBf16(w1, module->weight.grad(), what + " weight gradient");
  ExpectCloseInBf16(b1, module->bias.grad(), what + " bias gradient");
  module->weight.mutable_grad() = torch::Tensor();
  module->bias.mutable_grad() = torch::Tensor();
}

TEST(ConvLayer, UnderBf16AutocastBothLayersRunTheirOwnPathInBfloat16) {
  for (const Geometry& g : kGeometries) {
    for (bool relu : {true, false}) {
      torch::manual_seed(12);
      const std::string shape = std::to_string(g.in_channels) + "<->" + std::to_string(g.out_channels) + " k" +
                                std::to_string(g.kernel) + " s" + std::to_string(g.stride) + (relu ? " relu" : "");
      const int64_t padding = g.kernel / 2, output_padding = g.stride - 1;
      torch::nn::Conv1d conv(
          torch::nn::Conv1dOptions(g.in_channels, g.out_channels, g.kernel).stride(g.stride).padding(padding));
      CompareWithBf16Reference(
          conv, torch::randn({3, g.in_channels, g.length}), relu, Conv1dLayer,
          [&](const torch::Tensor& x, const torch::Tensor& w, const torch::Tensor& b) {
            return torch::conv1d(x, w, b, g.stride, padding);
          },
          "bf16 Conv1d " + shape, "Conv1dFunction");
      torch::nn::ConvTranspose1d deconv(torch::nn::ConvTranspose1dOptions(g.out_channels, g.in_channels, g.kernel)
                                            .stride(g.stride)
                                            .padding(padding)
                                            .output_padding(output_padding));
      CompareWithBf16Reference(
          deconv, torch::randn({3, g.out_channels, g.length / g.stride + 1}), relu, ConvTranspose1dLayer,
          [&](const torch::Tensor& x, const torch::Tensor& w, const torch::Tensor& b) {
            return torch::conv_transpose1d(x, w, b, g.stride, padding, output_padding);
          },
          "bf16 ConvTranspose1d " + shape, "ConvTranspose1dFunction");
    }
  }
}

TEST(ConvLayer, PaddingSameAndDilationTakeLibTorchsPath) {
  torch::manual_seed(9);
  torch::nn::Conv1d same(torch::nn::Conv1dOptions(2, 3, 5).padding(torch::kSame));
  CompareWithLibTorch(same, torch::randn({2, 2, 20}), true, Conv1dLayer, "padding same", /*channels_last=*/false);
  torch::nn::Conv1d dilated(torch::nn::Conv1dOptions(2, 3, 3).dilation(2).padding(2));
  CompareWithLibTorch(dilated, torch::randn({2, 2, 20}), true, Conv1dLayer, "dilation 2", /*channels_last=*/false);
}

}  // namespace
}  // namespace ct
