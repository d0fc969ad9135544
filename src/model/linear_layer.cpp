#include "model/linear_layer.h"

#include <torch/csrc/autograd/custom_function.h>
#include <torch/nn/functional/linear.h>

#include "model/cpu_sgemm.h"
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

// Writes `product` (computed in the layer's compute dtype) into `param`'s existing .grad: over it
// where it is stale, else added to it. A bfloat16 product is widened as AccumulateGrad would
// after LibTorch's cast back to the parameter's dtype, so the numbers are LibTorch's.
void WriteIntoGrad(const torch::Tensor& param, const torch::Tensor& product) {
  at::Tensor into = param.grad();
  if (ClaimStaleGradient(param)) {
    into.copy_(product);
  } else {
    into.add_(product);
  }
}

// The weight's gradient g^T x into its .grad; in float32 with no pass beyond the GEMM itself
// (beta = 0 over a stale .grad: its old values are not even read; beta = 1 otherwise).
void WriteWeightGrad(const torch::Tensor& weight, const torch::Tensor& g, const torch::Tensor& x) {
  at::Tensor into = weight.grad();
  if (g.scalar_type() != into.scalar_type()) return WriteIntoGrad(weight, at::mm(g.t(), x));
  const bool stale = ClaimStaleGradient(weight);
  if (BlasProductInto(FloatMatrix::Of(g).T(), FloatMatrix::Of(x), stale ? 0.0f : 1.0f, FloatMatrix::Of(into))) return;
  if (stale) {
    at::mm_out(into, g.t(), x);
  } else {
    into.addmm_(g.t(), x);
  }
}

void WriteBiasGrad(const torch::Tensor& bias, const torch::Tensor& g) {
  at::Tensor into = bias.grad();
  if (g.scalar_type() != into.scalar_type()) return WriteIntoGrad(bias, g.sum(0));
  if (ClaimStaleGradient(bias)) {
    at::sum_out(into, g, {0});
  } else {
    into.add_(g.sum(0));
  }
}

// Whether a product of these float32 CPU tensors may bypass ATen (model/cpu_sgemm.h: the same
// numbers without ATen's operator calls): not where autograd must record it (a backward that
// builds a graph).
bool DirectBlas(const torch::Tensor& a, const torch::Tensor& b) {
  return a.scalar_type() == at::kFloat && b.scalar_type() == at::kFloat && !torch::GradMode::is_enabled() &&
         HasBlasSgemm();
}

// x W^T + b, as at::addmm(b, x, W.t()) computes it.
torch::Tensor Affine(const torch::Tensor& x, const torch::Tensor& w, const torch::Tensor& b) {
  if (DirectBlas(x, w) && b.scalar_type() == at::kFloat && b.is_contiguous()) {
    torch::Tensor y = RowsOfBias(b, x.size(0));
    if (BlasProductInto(FloatMatrix::Of(x), FloatMatrix::Of(w).T(), 1.0f, FloatMatrix::Of(y))) return y;
  }
  return at::addmm(b, x, w.t());
}

// a b, as at::mm computes it.
torch::Tensor Product(const torch::Tensor& a, const torch::Tensor& b) {
  if (DirectBlas(a, b)) {
    torch::Tensor out = at::empty({a.size(0), b.size(1)}, a.options());
    if (BlasProductInto(FloatMatrix::Of(a), FloatMatrix::Of(b), 0.0f, FloatMatrix::Of(out))) return out;
  }
  return at::mm(a, b);
}

// `dtype`: what the products run in, float32, or bfloat16 under bf16 autocast (the float32
// parameters and input cast as autocast casts them; the output stays bfloat16, as autocast's).
struct LinearFunction : public torch::autograd::Function<LinearFunction> {
  static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& x, const torch::Tensor& weight,
                               const torch::Tensor& bias, bool relu, at::ScalarType dtype) {
    const torch::Tensor xc = InDtype(x, dtype), wc = InDtype(weight, dtype);  // no copies in float32
    torch::Tensor y = Affine(xc, wc, InDtype(bias, dtype));
    if (relu) y.relu_();
    ctx->save_for_backward({x, weight, bias, xc, wc, relu ? y : torch::Tensor()});
    return y;
  }

  static variable_list backward(AutogradContext* ctx, variable_list grad_outputs) {
    const variable_list saved = ctx->get_saved_variables();
    const torch::Tensor& x = saved[0];
    const torch::Tensor& weight = saved[1];
    const torch::Tensor& bias = saved[2];
    torch::Tensor xc = saved[3], wc = saved[4];
    if (torch::GradMode::is_enabled() && wc.scalar_type() != weight.scalar_type()) {
      // A backward that builds a graph: casts that autograd sees, so that it reaches x and W.
      xc = x.to(wc.scalar_type());
      wc = weight.to(wc.scalar_type());
    }
    torch::Tensor g = grad_outputs[0].contiguous();
    if (saved[5].defined()) g = at::threshold_backward(g, saved[5], 0);  // ReLU: zero where y == 0

    torch::Tensor grad_x, grad_weight, grad_bias;
    if (ctx->needs_input_grad(0)) grad_x = InDtype(Product(g, wc), x.scalar_type());
    if (CanAddIntoGrad(weight)) {
      WriteWeightGrad(weight, g, xc);
    } else if (ctx->needs_input_grad(1)) {
      grad_weight = InDtype(at::mm(g.t(), xc), weight.scalar_type());
    }
    if (CanAddIntoGrad(bias)) {
      WriteBiasGrad(bias, g);
    } else if (ctx->needs_input_grad(2)) {
      grad_bias = InDtype(g.sum(0), bias.scalar_type());
    }
    return {grad_x, grad_weight, grad_bias, torch::Tensor(), torch::Tensor()};
  }
};

// The dtype the CPU path computes in: float32, or bfloat16 under bf16 autocast; none where the
// plain LibTorch path must run.
c10::optional<at::ScalarType> FastPathDtype(const torch::Tensor& x, const torch::Tensor& w, const torch::Tensor& bias) {
  const bool float_layer = x.device().is_cpu() && w.device().is_cpu() && w.scalar_type() == at::kFloat &&
                           bias.defined() && bias.scalar_type() == at::kFloat && x.dim() == 2;
  if (!float_layer) return c10::nullopt;
  return CpuLayerDtype(x);
}

}  // namespace

torch::Tensor LinearLayer(const torch::Tensor& x, const torch::Tensor& weight, const torch::Tensor& bias, bool relu) {
  const c10::optional<at::ScalarType> dtype = FastPathDtype(x, weight, bias);
  if (!dtype) {
    torch::Tensor y = torch::nn::functional::linear(x, weight, bias);
    return relu ? torch::relu(y) : y;
  }
  return LinearFunction::apply(x, weight, bias, relu, *dtype);
}

torch::Tensor LinearLayer(const torch::nn::Linear& layer, const torch::Tensor& x, bool relu) {
  return LinearLayer(x, layer->weight, layer->bias, relu);
}

}  // namespace ct
