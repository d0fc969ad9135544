// Float32 CPU matrices read row by row, for the VAE's own CPU kernels (model/vae_loss_terms.cpp,
// model/reparameterize.cpp): the check that a fast path applies, and a row's first element.
#pragma once

#include <ATen/core/Tensor.h>

#include <initializer_list>

namespace ct {

// Float32 CPU matrices of one shape whose rows are contiguous (a column slice such as chunk()'s
// halves qualifies; the rows may be further apart than their length).
inline bool FloatRowsOnCpu(std::initializer_list<const at::Tensor*> matrices) {
  const at::Tensor& first = **matrices.begin();
  for (const at::Tensor* t : matrices) {
    if (!t->device().is_cpu() || t->scalar_type() != at::kFloat || t->dim() != 2 || t->stride(1) != 1 ||
        t->sizes() != first.sizes()) {
      return false;
    }
  }
  return true;
}

// Row i of such a matrix.
inline const float* FloatRow(const at::Tensor& t, int64_t i) { return t.data_ptr<float>() + i * t.stride(0); }

}  // namespace ct
