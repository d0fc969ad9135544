// Float32 matrix products on the CPU through the BLAS routine ATen itself calls (sgemm_), without
// ATen's operator calls around it.
//
// at::addmm and at::mm on float32 CPU tensors end in the BLAS's sgemm_ (the bundled MKL in pip's
// LibTorch, libblas.so.3 in Debian's), but on the way make several dispatched calls per product
// (t, transpose, as_strided, expand, resolve_conj ...). The built-in layers run 17 products a
// step, and those calls cost more than some of the products. Here the same sgemm_ gets the
// arguments ATen's addmm would give it (which operand goes first, the transposes, the leading
// dimensions), so the results are ATen's bit for bit; the unit tests assert torch::equal.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>

namespace ct {

// A float32 CPU matrix as the BLAS reads it: a tensor's, or its transpose without a t() call.
struct FloatMatrix {
  float* data;
  int64_t rows, cols;
  int64_t row_stride, col_stride;  // in elements

  // t: a 2-D float32 CPU tensor (checked by the caller).
  static FloatMatrix Of(const at::Tensor& t) {
    return {t.data_ptr<float>(), t.size(0), t.size(1), t.stride(0), t.stride(1)};
  }
  FloatMatrix T() const { return {data, cols, rows, col_stride, row_stride}; }
};

// Whether the BLAS's sgemm_ was found (looked up once, in LibTorch's CPU library and the
// libraries it loads). Without it the callers use ATen's operators.
bool HasBlasSgemm();

// out = a b + beta out, as at::mm_out(out, a, b) (beta 0: out's old values are not read) or
// out.addmm_(a, b) (beta 1) compute it: a [m, k], b [k, n], out [m, n]. Returns false, having
// done nothing, where sgemm_ is absent, a size is 0, or a layout is one ATen would copy before
// its product (or hand to its own kernel); the caller then runs ATen's operator.
bool BlasProductInto(const FloatMatrix& a, const FloatMatrix& b, float beta, const FloatMatrix& out);

// A new [rows, bias.numel()] float32 CPU tensor with `bias` in every row: what at::addmm copies
// into its result before the product adds to it (beta 1). bias: contiguous float32 on the CPU.
at::Tensor RowsOfBias(const at::Tensor& bias, int64_t rows);

}  // namespace ct
