#include "model/vae_loss_terms.h"

#include <torch/csrc/autograd/custom_function.h>

#include <algorithm>
#include <cmath>

#include "model/float_rows.h"
#include "util/parallel_for.h"

namespace ct {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// Rows per parallel task: about 16K elements each, so that a small batch stays on one thread.
int64_t RowGrain(int64_t cols) { return std::max<int64_t>(1, 16384 / std::max<int64_t>(1, cols)); }

// sum_j (r_j - t_j)^2 in 16 running sums, so that the loop vectorises without the compiler
// having to reorder one running sum (which it may not do without -ffast-math).
float SumSquaredDifference(const float* r, const float* t, int64_t n) {
  constexpr int64_t kLanes = 16;
  float lane[kLanes] = {};
  int64_t j = 0;
  for (; j + kLanes <= n; j += kLanes) {
    for (int64_t k = 0; k < kLanes; ++k) {
      const float d = r[j + k] - t[j + k];
      lane[k] += d * d;
    }
  }
  float sum = 0;
  for (; j < n; ++j) sum += (r[j] - t[j]) * (r[j] - t[j]);
  for (const float l : lane) sum += l;
  return sum;
}

struct RowMeanSquaredErrorFunction : public torch::autograd::Function<RowMeanSquaredErrorFunction> {
  static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& recon, const torch::Tensor& target) {
    const int64_t rows = recon.size(0), cols = recon.size(1);
    torch::Tensor mse = at::empty({rows}, recon.options());
    const float* r = recon.data_ptr<float>();
    const float* t = target.data_ptr<float>();
    float* out = mse.data_ptr<float>();
    at::parallel_for(0, rows, RowGrain(cols), [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        out[i] = SumSquaredDifference(r + i * cols, t + i * cols, cols) / static_cast<float>(cols);
      }
    });
    ctx->save_for_backward({recon, target});  // both alive anyway: nothing of their size is kept
    return mse;
  }

  static variable_list backward(AutogradContext* ctx, variable_list grad_outputs) {
    const variable_list saved = ctx->get_saved_variables();
    const torch::Tensor& recon = saved[0];
    const torch::Tensor& target = saved[1];
    const int64_t rows = recon.size(0), cols = recon.size(1);
    const torch::Tensor g = grad_outputs[0].contiguous();
    if (torch::GradMode::is_enabled()) {  // create_graph: a backward that is itself differentiable
      return {(recon - target) * (g * (2.0 / static_cast<double>(cols))).unsqueeze(1), torch::Tensor()};
    }
    // d mse_i / d recon_ij = 2 (recon_ij - target_ij) / L, in one pass.
    torch::Tensor grad = at::empty_like(recon);
    const float* r = recon.data_ptr<float>();
    const float* t = target.data_ptr<float>();
    const float* gi = g.data_ptr<float>();
    float* out = grad.data_ptr<float>();
    at::parallel_for(0, rows, RowGrain(cols), [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        const float scale = gi[i] * (2.0f / static_cast<float>(cols));
        const float* ri = r + i * cols;
        const float* ti = t + i * cols;
        float* oi = out + i * cols;
        for (int64_t j = 0; j < cols; ++j) oi[j] = (ri[j] - ti[j]) * scale;
      }
    });
    return {grad, torch::Tensor()};
  }
};

struct RowGaussianKlFunction : public torch::autograd::Function<RowGaussianKlFunction> {
  static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& mu, const torch::Tensor& logvar) {
    const int64_t rows = mu.size(0), cols = mu.size(1);
    torch::Tensor kl = at::empty({rows}, mu.options());
    float* out = kl.data_ptr<float>();
    for (int64_t i = 0; i < rows; ++i) {
      const float* m = FloatRow(mu, i);
      const float* lv = FloatRow(logvar, i);
      float sum = 0;
      for (int64_t k = 0; k < cols; ++k) sum += ((1.0f + lv[k]) - m[k] * m[k]) - std::exp(lv[k]);
      out[i] = -0.5f * sum;
    }
    ctx->save_for_backward({mu, logvar});
    return kl;
  }

  static variable_list backward(AutogradContext* ctx, variable_list grad_outputs) {
    const variable_list saved = ctx->get_saved_variables();
    const torch::Tensor& mu = saved[0];
    const torch::Tensor& logvar = saved[1];
    const torch::Tensor g = grad_outputs[0].contiguous().unsqueeze(1);
    // d kl_i / d mu_ik = mu_ik, d kl_i / d logvar_ik = (exp(logvar_ik) - 1) / 2.
    if (torch::GradMode::is_enabled()) return {mu * g, (logvar.exp() - 1) * 0.5 * g};
    torch::Tensor grad_mu, grad_logvar;
    if (ctx->needs_input_grad(0)) grad_mu = mu * g;
    if (ctx->needs_input_grad(1)) {
      grad_logvar = at::empty(logvar.sizes(), logvar.options());
      const int64_t rows = logvar.size(0), cols = logvar.size(1);
      const float* gi = g.data_ptr<float>();
      float* out = grad_logvar.data_ptr<float>();
      for (int64_t i = 0; i < rows; ++i) {
        const float* lv = FloatRow(logvar, i);
        for (int64_t k = 0; k < cols; ++k) out[i * cols + k] = (std::exp(lv[k]) - 1.0f) * 0.5f * gi[i];
      }
    }
    return {grad_mu, grad_logvar};
  }
};

// mean_i mse_i + beta mean_i kl_i in one node: LibTorch's ops made it four nodes forward and four
// backward (mean, mul, mean, add), each scalar argument its own tensor. Summed in double.
struct WeightedBatchMeanFunction : public torch::autograd::Function<WeightedBatchMeanFunction> {
  static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& mse, const torch::Tensor& kl, double beta) {
    const int64_t rows = mse.size(0);
    const float* m = mse.data_ptr<float>();
    const float* k = kl.data_ptr<float>();
    double mse_sum = 0, kl_sum = 0;
    for (int64_t i = 0; i < rows; ++i) {
      mse_sum += m[i];
      kl_sum += k[i];
    }
    ctx->saved_data["beta"] = beta;
    ctx->saved_data["rows"] = rows;
    return at::scalar_tensor(static_cast<float>((mse_sum + beta * kl_sum) / static_cast<double>(rows)), mse.options());
  }

  static variable_list backward(AutogradContext* ctx, variable_list grad_outputs) {
    const double beta = ctx->saved_data["beta"].toDouble();
    const int64_t rows = ctx->saved_data["rows"].toInt();
    const torch::Tensor& g = grad_outputs[0];
    if (torch::GradMode::is_enabled()) {  // create_graph: a backward that is itself differentiable
      const torch::Tensor per_row = g / static_cast<double>(rows);
      return {per_row.expand({rows}), (per_row * beta).expand({rows}), {}};
    }
    // Each row's share of the mean; g is a float on the CPU, read in place (no op, no sync).
    const double share = static_cast<double>(*g.to(at::kFloat).data_ptr<float>()) / static_cast<double>(rows);
    torch::Tensor grad_mse = at::empty({rows}, g.options().dtype(at::kFloat));
    torch::Tensor grad_kl = at::empty({rows}, g.options().dtype(at::kFloat));
    std::fill_n(grad_mse.data_ptr<float>(), rows, static_cast<float>(share));
    std::fill_n(grad_kl.data_ptr<float>(), rows, static_cast<float>(share * beta));
    return {grad_mse, grad_kl, {}};
  }
};

}  // namespace

torch::Tensor RowMeanSquaredError(const torch::Tensor& recon, const torch::Tensor& target) {
  if (FloatRowsOnCpu({&recon, &target}) && recon.is_contiguous() && target.is_contiguous() && !target.requires_grad()) {
    return RowMeanSquaredErrorFunction::apply(recon, target);
  }
  return (recon - target).pow(2).mean(/*dim=*/1);
}

torch::Tensor WeightedBatchMean(const torch::Tensor& mse, const torch::Tensor& kl, double beta) {
  const bool fast = mse.device().is_cpu() && kl.device().is_cpu() && mse.scalar_type() == at::kFloat &&
                    kl.scalar_type() == at::kFloat && mse.dim() == 1 && mse.sizes() == kl.sizes() && mse.size(0) > 0 &&
                    mse.is_contiguous() && kl.is_contiguous();
  if (fast) return WeightedBatchMeanFunction::apply(mse, kl, beta);
  return mse.mean() + beta * kl.mean();
}

torch::Tensor RowGaussianKl(const torch::Tensor& mu, const torch::Tensor& logvar) {
  if (FloatRowsOnCpu({&mu, &logvar})) return RowGaussianKlFunction::apply(mu, logvar);
  return -0.5 * (1 + logvar - mu.pow(2) - logvar.exp()).sum(/*dim=*/1);
}

}  // namespace ct
