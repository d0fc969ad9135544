#include "model/conv_layer.h"

#include <torch/csrc/autograd/custom_function.h>

#include <array>
#include <vector>

#include "model/precision.h"

namespace ct {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// A Conv1d's geometry (stride, padding); dilation 1, groups 1.
struct Geometry {
  int64_t stride;
  int64_t padding;
};

// The convolutions run as 2-D ones of height 1 on activations in channels-last memory: [B, C, L]
// tensors whose memory is ordered [B, L, C] (NWC). oneDNN's kernels for that layout were 1.4-4.4x
// faster than for [B, C, L] on these layers (PyTorch 1.13 and 2.13, 1-64 channels, kernel 7):
// the plain layout makes oneDNN pad the channels to blocks of 16, which for the single-channel
// first and last layers is 16 times the work. The weights keep their layout (oneDNN reorders the
// few kilobytes of a weight itself), and so do the parameters' gradients.

// x: [B, C, L] -> [B, C, 1, L] in NWC memory, copied only if it is not already. The strides are
// set to ATen's own for that layout, so that ATen sees channels-last even where a size-1
// dimension (one channel) would make the layout ambiguous and send it to the plain kernels.
torch::Tensor AsChannelsLast(const torch::Tensor& x) {
  const torch::Tensor x4 = x.unsqueeze(2).contiguous(at::MemoryFormat::ChannelsLast);
  const int64_t channels = x4.size(1), length = x4.size(3);
  return x4.as_strided(x4.sizes(), {length * channels, 1, length * channels, channels}, x4.storage_offset());
}

// [B, C, L] in NWC memory, at ATen's strides for channels-last (as AsChannelsLast makes them).
torch::Tensor EmptyChannelsLast(int64_t batch, int64_t channels, int64_t length, const at::TensorOptions& options) {
  return AsChannelsLast(at::empty({batch, length, channels}, options).transpose(1, 2)).squeeze(2);
}

torch::Tensor Conv(const torch::Tensor& x, const torch::Tensor& weight, const torch::Tensor& bias, Geometry g) {
  return at::convolution(AsChannelsLast(x), weight.unsqueeze(2), bias, {1, g.stride}, {0, g.padding}, {1, 1},
                         /*transposed=*/false, {0, 0}, /*groups=*/1)
      .squeeze(2);
}

// Whether the weight gradient is computed here in float32 from `dtype`'s values. LibTorch 1.x's
// bfloat16 convolution backward, where oneDNN does not run it (a CPU without AVX-512: ATen's own
// kernel), sums the weight gradient in bfloat16: on an AMD EPYC (Zen 3), for a 1 -> 16 channel
// layer of length 1024, 15% of its largest value off in channels-last memory and up to 5% in the
// plain layout where the terms cancel. oneDNN's bfloat16 kernels (AVX-512) and LibTorch 2.x sum in
// float32, as this does: the same bfloat16 inputs, rounded only once.
bool WeightGradInFloat32(at::ScalarType dtype) {
#if CT_LIBTORCH_MAJOR < 2 && defined(__x86_64__) && defined(__GNUC__)
  static const bool onednn_bf16 = [] {
    __builtin_cpu_init();
    // ATen 1.13's test for oneDNN's bfloat16 kernels (mkldnn_bf16_device_check)
    return __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl") &&
           __builtin_cpu_supports("avx512dq");
  }();
  return dtype == at::kBFloat16 && !onednn_bf16;
#else
  (void)dtype;
  return false;
#endif
}

// The Conv1d(input -> output) gradients: mask says which of (input, weight, bias) to compute.
std::tuple<at::Tensor, at::Tensor, at::Tensor> ConvBackward(const torch::Tensor& grad_output,
                                                            const torch::Tensor& input, const torch::Tensor& weight,
                                                            Geometry g, std::array<bool, 3> mask) {
  const auto backward = [&](const torch::Tensor& grad, const torch::Tensor& in, const torch::Tensor& w,
                            std::array<bool, 3> which) {
    return at::convolution_backward(AsChannelsLast(grad), AsChannelsLast(in), w.unsqueeze(2),
                                    std::vector<int64_t>{w.size(0)}, {1, g.stride}, {0, g.padding}, {1, 1},
                                    /*transposed=*/false, {0, 0}, /*groups=*/1, which);
  };
  const bool weight_in_float32 = mask[1] && WeightGradInFloat32(input.scalar_type());
  at::Tensor grad_input, grad_weight, grad_bias;
  if (mask[0] || mask[2] || (mask[1] && !weight_in_float32)) {
    std::tie(grad_input, grad_weight, grad_bias) =
        backward(grad_output, input, weight, {mask[0], mask[1] && !weight_in_float32, mask[2]});
  }
  if (weight_in_float32) {
    grad_weight = std::get<1>(
        backward(grad_output.to(at::kFloat), input.to(at::kFloat), weight.to(at::kFloat), {false, true, false}));
  }
  if (grad_input.defined()) grad_input = grad_input.squeeze(2);
  if (grad_weight.defined()) grad_weight = grad_weight.squeeze(2).contiguous();  // the parameter's own layout
  return {grad_input, grad_weight, grad_bias};
}

// The incoming gradient in the activations' layout, masked by ReLU's derivative where the layer has one.
torch::Tensor MaskedByRelu(const torch::Tensor& grad, const torch::Tensor& output) {
  const torch::Tensor g = AsChannelsLast(grad).squeeze(2);
  return output.defined() ? at::threshold_backward(g, output, 0) : g;
}

// The end of both forwards: ReLU in place on the output y, and what backward needs saved (the
// input and weight as the products read them, the output when ReLU masks the gradient, the
// geometry, and the input's own dtype).
torch::Tensor ReluAndSave(AutogradContext* ctx, torch::Tensor y, const torch::Tensor& x, const torch::Tensor& weight,
                          Geometry g, bool relu, at::ScalarType input_dtype) {
  if (relu) y.relu_();
  ctx->save_for_backward({x, weight, relu ? y : torch::Tensor()});
  ctx->saved_data["stride"] = g.stride;
  ctx->saved_data["padding"] = g.padding;
  ctx->saved_data["input_dtype"] = static_cast<int64_t>(input_dtype);
  return y;
}

Geometry SavedGeometry(AutogradContext* ctx) {
  return {ctx->saved_data["stride"].toInt(), ctx->saved_data["padding"].toInt()};
}

// The gradients computed in the products' dtype (bfloat16 under autocast), returned in the
// dtypes of what they are gradients of: the input's, and the float32 parameters'.
variable_list InInputDtypes(AutogradContext* ctx, torch::Tensor grad_x, torch::Tensor grad_weight,
                            torch::Tensor grad_bias, size_t non_tensor_arguments) {
  const auto input_dtype = static_cast<at::ScalarType>(ctx->saved_data["input_dtype"].toInt());
  if (grad_x.defined()) grad_x = InDtype(grad_x, input_dtype);
  if (grad_weight.defined()) grad_weight = InDtype(grad_weight, at::kFloat);
  if (grad_bias.defined()) grad_bias = InDtype(grad_bias, at::kFloat);
  variable_list grads{grad_x, grad_weight, grad_bias};
  grads.resize(3 + non_tensor_arguments);
  return grads;
}

// `dtype` in both Functions: what the convolutions run in, float32, or bfloat16 under bf16
// autocast (input, weight and bias cast as autocast casts them; a bfloat16 output).
struct Conv1dFunction : public torch::autograd::Function<Conv1dFunction> {
  static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& x, const torch::Tensor& weight,
                               const torch::Tensor& bias, int64_t stride, int64_t padding, bool relu,
                               at::ScalarType dtype) {
    const Geometry g{stride, padding};
    const torch::Tensor x_nwc = AsChannelsLast(InDtype(x, dtype)).squeeze(2);  // saved in the layout backward reads
    const torch::Tensor w = InDtype(weight, dtype);                            // no copies in float32
    return ReluAndSave(ctx, Conv(x_nwc, w, InDtype(bias, dtype), g), x_nwc, w, g, relu, x.scalar_type());
  }

  static variable_list backward(AutogradContext* ctx, variable_list grad_outputs) {
    const variable_list saved = ctx->get_saved_variables();
    const Geometry g = SavedGeometry(ctx);
    const torch::Tensor grad = MaskedByRelu(grad_outputs[0], saved[2]);
    auto [grad_x, grad_weight, grad_bias] = ConvBackward(
        grad, saved[0], saved[1], g, {ctx->needs_input_grad(0), ctx->needs_input_grad(1), ctx->needs_input_grad(2)});
    return InInputDtypes(ctx, grad_x, grad_weight, grad_bias, /*non_tensor_arguments=*/4);
  }
};

// y = ConvTranspose1d(x; weight) = the input gradient of Conv1d(. ; weight) at grad_output x.
// The weight is [in_channels of x, out_channels of y, k] in both readings.
struct ConvTranspose1dFunction : public torch::autograd::Function<ConvTranspose1dFunction> {
  static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& x, const torch::Tensor& weight,
                               const torch::Tensor& bias, int64_t stride, int64_t padding, int64_t output_length,
                               bool relu, at::ScalarType dtype) {
    const Geometry g{stride, padding};
    const torch::Tensor x_nwc = AsChannelsLast(InDtype(x, dtype)).squeeze(2);  // saved in the layout backward reads
    const torch::Tensor w = InDtype(weight, dtype);
    // Only the shape of the adjoint Conv1d's input is read.
    const torch::Tensor shape_of_y = EmptyChannelsLast(x.size(0), weight.size(1), output_length, x_nwc.options());
    torch::Tensor y = std::get<0>(ConvBackward(x_nwc, shape_of_y, w, g, {true, false, false}));
    y.add_(InDtype(bias, dtype).view({1, -1, 1}));
    return ReluAndSave(ctx, y, x_nwc, w, g, relu, x.scalar_type());
  }

  static variable_list backward(AutogradContext* ctx, variable_list grad_outputs) {
    const variable_list saved = ctx->get_saved_variables();
    const torch::Tensor& x = saved[0];
    const torch::Tensor& weight = saved[1];
    const Geometry g = SavedGeometry(ctx);
    const torch::Tensor grad = MaskedByRelu(grad_outputs[0], saved[2]);
    torch::Tensor grad_x, grad_weight, grad_bias;
    if (ctx->needs_input_grad(0)) grad_x = Conv(grad, weight, torch::Tensor(), g);
    // The adjoint Conv1d's weight gradient: its input is our output's gradient, its output ours.
    if (ctx->needs_input_grad(1)) grad_weight = std::get<1>(ConvBackward(x, grad, weight, g, {false, true, false}));
    if (ctx->needs_input_grad(2)) grad_bias = grad.sum(at::IntArrayRef{0, 2});
    return InInputDtypes(ctx, grad_x, grad_weight, grad_bias, /*non_tensor_arguments=*/5);
  }
};

// The dtype the CPU path computes in (model/precision.h), or none for LibTorch's own path.
c10::optional<at::ScalarType> FastPathDtype(const torch::Tensor& weight, const torch::Tensor& bias,
                                            const torch::Tensor& x, int64_t dilation, int64_t groups) {
  const bool float_layer = dilation == 1 && groups == 1 && bias.defined() && x.dim() == 3 && x.device().is_cpu() &&
                           weight.device().is_cpu() && weight.scalar_type() == at::kFloat &&
                           bias.scalar_type() == at::kFloat;
  if (!float_layer) return c10::nullopt;
  return CpuLayerDtype(x);
}

// The padding as a number, or nullptr for "same"/"valid" (c10::variant in LibTorch 1.13,
// std::variant from 2.x).
const torch::ExpandingArray<1>* ExplicitPadding(const torch::nn::detail::ConvNdOptions<1>::padding_t& padding) {
#if CT_LIBTORCH_MAJOR < 2
  return c10::get_if<torch::ExpandingArray<1>>(&padding);
#else
  return std::get_if<torch::ExpandingArray<1>>(&padding);
#endif
}

// LibTorch's own module, then ReLU as a separate operation.
template <typename Holder>
torch::Tensor Plain(Holder layer, const torch::Tensor& x, bool relu) {
  torch::Tensor y = layer->forward(x);
  return relu ? torch::relu(y) : y;
}

}  // namespace

torch::Tensor Conv1dLayer(const torch::nn::Conv1d& layer, const torch::Tensor& x, bool relu) {
  const auto& options = layer->options;
  const torch::ExpandingArray<1>* padding = ExplicitPadding(options.padding());
  const c10::optional<at::ScalarType> dtype =
      FastPathDtype(layer->weight, layer->bias, x, options.dilation()->at(0), options.groups());
  if (!padding || !dtype) return Plain(layer, x, relu);
  return Conv1dFunction::apply(x, layer->weight, layer->bias, options.stride()->at(0), (*padding)->at(0), relu, *dtype);
}

torch::Tensor ConvTranspose1dLayer(const torch::nn::ConvTranspose1d& layer, const torch::Tensor& x, bool relu) {
  const auto& options = layer->options;
  const torch::ExpandingArray<1>* explicit_padding = ExplicitPadding(options.padding());
  const c10::optional<at::ScalarType> dtype =
      FastPathDtype(layer->weight, layer->bias, x, options.dilation()->at(0), options.groups());
  if (!explicit_padding || !dtype) return Plain(layer, x, relu);
  const int64_t stride = options.stride()->at(0);
  const int64_t padding = (*explicit_padding)->at(0);
  const int64_t output_length =
      (x.size(2) - 1) * stride - 2 * padding + options.kernel_size()->at(0) + options.output_padding()->at(0);
  return ConvTranspose1dFunction::apply(x, layer->weight, layer->bias, stride, padding, output_length, relu, *dtype);
}

}  // namespace ct
