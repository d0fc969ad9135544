#include "model/reparameterize.h"

#include <torch/csrc/autograd/custom_function.h>

#include "model/float_rows.h"

namespace ct {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

torch::Tensor Plain(const torch::Tensor& mu, const torch::Tensor& logvar, const torch::Tensor& eps) {
  return mu + eps * torch::exp(0.5 * logvar);
}

struct ReparameterizeFunction : public torch::autograd::Function<ReparameterizeFunction> {
  static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& mu, const torch::Tensor& logvar,
                               const torch::Tensor& eps) {
    const int64_t rows = mu.size(0), cols = mu.size(1);
    // sigma = exp(logvar / 2), kept for backward. The exp is ATen's own kernel, so that every
    // number is LibTorch's bit for bit (a different exp is 1 ulp off at times, and Adam makes
    // that a visible difference in the losses within an epoch).
    torch::Tensor sigma = at::empty({rows, cols}, mu.options());
    float* so = sigma.data_ptr<float>();
    for (int64_t i = 0; i < rows; ++i) {
      const float* lv = FloatRow(logvar, i);
      for (int64_t k = 0; k < cols; ++k) so[i * cols + k] = 0.5f * lv[k];
    }
    sigma.exp_();
    torch::Tensor z = at::empty({rows, cols}, mu.options());
    float* zo = z.data_ptr<float>();
    for (int64_t i = 0; i < rows; ++i) {
      const float *m = FloatRow(mu, i), *e = FloatRow(eps, i);
      for (int64_t k = 0; k < cols; ++k) zo[i * cols + k] = m[k] + e[k] * so[i * cols + k];
    }
    ctx->save_for_backward({logvar, eps, sigma});  // dz/dmu = 1 needs nothing
    return z;
  }

  static variable_list backward(AutogradContext* ctx, variable_list grad_outputs) {
    const variable_list saved = ctx->get_saved_variables();
    const torch::Tensor& logvar = saved[0];
    const torch::Tensor& eps = saved[1];
    const torch::Tensor& sigma = saved[2];
    const torch::Tensor g = grad_outputs[0].contiguous();
    if (torch::GradMode::is_enabled()) {  // create_graph: a backward that is itself differentiable
      return {g, g * eps * 0.5 * torch::exp(0.5 * logvar), torch::Tensor()};
    }
    torch::Tensor grad_logvar;
    if (ctx->needs_input_grad(1)) {
      grad_logvar = at::empty_like(g);
      const float* gi = g.data_ptr<float>();
      const float* s = sigma.data_ptr<float>();
      float* out = grad_logvar.data_ptr<float>();
      const int64_t rows = g.size(0), cols = g.size(1);
      for (int64_t i = 0; i < rows; ++i) {
        const float* e = FloatRow(eps, i);
        for (int64_t k = 0; k < cols; ++k) out[i * cols + k] = gi[i * cols + k] * e[k] * 0.5f * s[i * cols + k];
      }
    }
    return {ctx->needs_input_grad(0) ? g : torch::Tensor(), grad_logvar, torch::Tensor()};
  }
};

}  // namespace

torch::Tensor Reparameterize(const torch::Tensor& mu, const torch::Tensor& logvar, const torch::Tensor& eps) {
  const bool fast = FloatRowsOnCpu({&mu, &logvar, &eps}) && !eps.requires_grad();
  return fast ? ReparameterizeFunction::apply(mu, logvar, eps) : Plain(mu, logvar, eps);
}

}  // namespace ct
