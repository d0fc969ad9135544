#include "model/linear_layer.h"

#include <torch/csrc/autograd/custom_function.h>
#include <torch/nn/functional/linear.h>

#include "model/precision.h"
#include "model/stale_gradients.h"

namespace ct {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// Whether a gradient for `param` may be added into its .grad here, as AccumulateGrad would add
// it: a dense .grad of the parameter's shape and dtype, and no graph of the backward being built.
bool CanAddIntoGrad(const torch::Tensor& param) {
  if (!param.is_leaf()) return false;  // a computed weight has no .grad of its own
  const torch::Tensor& grad = param.grad();
  return param.requires_grad() && grad.defined() && !torch::GradMode::is_enabled() && !grad.is_sparse() &&
         grad.is_contiguous() && grad.scalar_type() == param.scalar_type() && grad.sizes() == param.sizes();
}

struct LinearFunction : public torch::autograd::Function<LinearFunction> {
  static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& x, const torch::Tensor& weight,
                               const torch::Tensor& bias, bool relu) {
    torch::Tensor y = at::addmm(bias, x, weight.t());
    if (relu) y.relu_();
    ctx->save_for_backward({x, weight, bias, relu ? y : torch::Tensor()});
    return y;
  }

  static variable_list backward(AutogradContext* ctx, variable_list grad_outputs) {
    const variable_list saved = ctx->get_saved_variables();
    const torch::Tensor& x = saved[0];
    const torch::Tensor& weight = saved[1];
    const torch::Tensor& bias = saved[2];
    torch::Tensor g = grad_outputs[0].contiguous();
    if (saved[3].defined()) g = at::threshold_backward(g, saved[3], 0);  // ReLU: zero where y == 0

    torch::Tensor grad_x, grad_weight, grad_bias;
    if (ctx->needs_input_grad(0)) grad_x = at::mm(g, weight);
    if (CanAddIntoGrad(weight)) {
      if (ClaimStaleGradient(weight)) {
        at::Tensor into = weight.grad();
        at::mm_out(into, g.t(), x);  // replaces last step's values without reading them
      } else {
        weight.grad().addmm_(g.t(), x);
      }
    } else if (ctx->needs_input_grad(1)) {
      grad_weight = at::mm(g.t(), x);
    }
    if (CanAddIntoGrad(bias)) {
      if (ClaimStaleGradient(bias)) {
        at::Tensor into = bias.grad();
        at::sum_out(into, g, {0});
      } else {
        bias.grad().add_(g.sum(0));
      }
    } else if (ctx->needs_input_grad(2)) {
      grad_bias = g.sum(0);
    }
    return {grad_x, grad_weight, grad_bias, torch::Tensor()};
  }
};

bool FastPathApplies(const torch::Tensor& x, const torch::Tensor& w, const torch::Tensor& bias) {
  return x.device().is_cpu() && w.device().is_cpu() && x.scalar_type() == at::kFloat && w.scalar_type() == at::kFloat &&
         bias.defined() && x.dim() == 2 && !AutocastOn(c10::kCPU);
}

}  // namespace

torch::Tensor LinearLayer(const torch::Tensor& x, const torch::Tensor& weight, const torch::Tensor& bias, bool relu) {
  if (!FastPathApplies(x, weight, bias)) {
    torch::Tensor y = torch::nn::functional::linear(x, weight, bias);
    return relu ? torch::relu(y) : y;
  }
  return LinearFunction::apply(x, weight, bias, relu);
}

torch::Tensor LinearLayer(const torch::nn::Linear& layer, const torch::Tensor& x, bool relu) {
  return LinearLayer(x, layer->weight, layer->bias, relu);
}

}  // namespace ct
