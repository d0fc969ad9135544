#include "model/cpu_sgemm.h"

#include <ATen/ATen.h>
#include <dlfcn.h>

#include <algorithm>
#include <climits>
#include <cstring>

#include "cluster/blas_info.h"
#include "util/parallel_for.h"

namespace ct {
namespace {

// The Fortran BLAS interface, which ATen's cpublas::gemm calls for float32.
using SgemmFn = void (*)(const char* transa, const char* transb, const int* m, const int* n, const int* k,
                         const float* alpha, const float* a, const int* lda, const float* b, const int* ldb,
                         const float* beta, float* c, const int* ldc);

// sgemm_ as LibTorch's CPU library finds it: its own (pip's LibTorch links MKL in) or that of a
// library it loads (Debian's libblas.so.3). A handle's dlsym searches the library and its
// dependencies, so another BLAS that the program happens to load elsewhere is not picked up.
SgemmFn FindSgemm() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&at::_ops::mm::call), &info) == 0 || info.dli_fname == nullptr) {
    return nullptr;
  }
  void* torch_cpu = dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD);
  if (torch_cpu == nullptr) return nullptr;
  void* sgemm = dlsym(torch_cpu, "sgemm_");
  dlclose(torch_cpu);  // RTLD_NOLOAD took a reference; the library stays loaded
  return reinterpret_cast<SgemmFn>(sgemm);
}

// Elements a thread at least when filling a result: ATen's GRAIN_SIZE, as its copy_ and fill_.
constexpr int64_t kGrain = 32768;

SgemmFn Sgemm() {
  static const SgemmFn sgemm = FindSgemm();
  return sgemm;
}

// Whether C is better zeroed here than by sgemm_ with beta = 0. OpenBLAS's Zen target (AMD Zen 1-3)
// applies beta = 0 as a pass of its own over C before the product, and a slow one: on a Zen 3
// VM the demo's 1-rank step took 13.4 ms with it and 11.1 ms with C zeroed here and beta = 1
// (6 interleaved runs each, docs/benchmarks.md). The numbers are the same (0 + x = x). Under
// MKL, and OpenBLAS's Haswell target on the same CPU, it changed nothing measurable.
bool ZeroBeforeProduct() {
  static const bool zen = OpenBlasKernel() == "Zen";  // the kernel of the OpenBLAS providing sgemm_
  return zen;
}

// Zeroes the column-major m x n matrix c (columns ldc apart) on the rank's threads.
void ZeroColumns(float* c, int64_t m, int64_t n, int64_t ldc) {
  at::parallel_for(0, n, std::max<int64_t>(1, kGrain / m), [&](int64_t begin, int64_t end) {
    for (int64_t j = begin; j < end; ++j) std::memset(c + j * ldc, 0, m * sizeof(float));
  });
}

// One operand as the BLAS takes it (column-major): as stored ('N') or transposed ('T').
struct BlasOperand {
  const float* data;
  char trans;
  int64_t ld;
};

// ATen's addmm_impl_cpu_ rules for an operand `t` of the product C = op(A) op(B), where
// `transpose_c` says that C is the result's transpose (a row-major result). `plain_ld_min`,
// `transposed_ld_min`: the leading dimensions the BLAS needs each way. False where ATen
// would copy the operand first.
bool AsBlasOperand(const FloatMatrix& t, bool transpose_c, int64_t plain_ld_min, int64_t transposed_ld_min,
                   BlasOperand* out) {
  const int64_t along = transpose_c ? t.col_stride : t.row_stride;   // between BLAS rows
  const int64_t across = transpose_c ? t.row_stride : t.col_stride;  // between BLAS columns
  if (along == 1 && across >= std::max<int64_t>(1, plain_ld_min)) {
    *out = {t.data, 'N', across};
  } else if (across == 1 && along >= std::max<int64_t>(1, transposed_ld_min)) {
    *out = {t.data, 'T', along};
  } else {
    return false;
  }
  return true;
}

// cpublas::internal::normalize_last_dims: the leading dimensions ATen passes where a size is 1.
void NormalizeLastDims(char transa, char transb, int64_t m, int64_t n, int64_t k, int64_t* lda, int64_t* ldb,
                       int64_t* ldc) {
  if (n == 1) *ldc = m;
  if (transa != 'N') {
    if (m == 1) *lda = k;
  } else if (k == 1) {
    *lda = m;
  }
  if (transb != 'N') {
    if (k == 1) *ldb = n;
  } else if (n == 1) {
    *ldb = k;
  }
}

// cpublas's use_blas_gemm: what the BLAS takes; anything else goes to ATen's own kernel.
bool BlasTakes(char transa, char transb, int64_t m, int64_t n, int64_t k, int64_t lda, int64_t ldb, int64_t ldc) {
  const int64_t int_max = INT_MAX;
  return m <= int_max && n <= int_max && k <= int_max && lda <= int_max && ldb <= int_max && ldc <= int_max &&
         lda >= std::max<int64_t>(1, transa != 'N' ? k : m) && ldb >= std::max<int64_t>(1, transb != 'N' ? n : k) &&
         ldc >= std::max<int64_t>(1, m);
}

}  // namespace

bool HasBlasSgemm() { return Sgemm() != nullptr; }

bool BlasProductInto(const FloatMatrix& a, const FloatMatrix& b, float beta, const FloatMatrix& out) {
  const SgemmFn sgemm = Sgemm();
  if (sgemm == nullptr || a.cols != b.rows || out.rows != a.rows || out.cols != b.cols) return false;
  if (out.rows == 0 || out.cols == 0 || a.cols == 0) return false;  // ATen's own special cases

  // The result as a column-major C: itself (contiguous columns), or its transpose (contiguous
  // rows, the usual case), computed then as C = b^T a^T with the operands swapped.
  bool transpose_c;
  if (out.row_stride == 1 && (out.cols == 1 || out.col_stride >= std::max<int64_t>(1, out.rows))) {
    transpose_c = false;
  } else if (out.col_stride == 1 && (out.rows == 1 || out.row_stride >= std::max<int64_t>(1, out.cols))) {
    transpose_c = true;
  } else {
    return false;
  }
  const FloatMatrix& first = transpose_c ? b : a;
  const FloatMatrix& second = transpose_c ? a : b;
  const int64_t m = transpose_c ? out.cols : out.rows;
  const int64_t n = transpose_c ? out.rows : out.cols;
  const int64_t k = a.cols;
  BlasOperand op_a{}, op_b{};
  if (!AsBlasOperand(first, transpose_c, m, k, &op_a) || !AsBlasOperand(second, transpose_c, k, n, &op_b)) {
    return false;
  }
  int64_t lda = op_a.ld, ldb = op_b.ld, ldc = transpose_c ? out.row_stride : out.col_stride;
  NormalizeLastDims(op_a.trans, op_b.trans, m, n, k, &lda, &ldb, &ldc);
  if (!BlasTakes(op_a.trans, op_b.trans, m, n, k, lda, ldb, ldc)) return false;

  const int m_ = static_cast<int>(m), n_ = static_cast<int>(n), k_ = static_cast<int>(k);
  const int lda_ = static_cast<int>(lda), ldb_ = static_cast<int>(ldb), ldc_ = static_cast<int>(ldc);
  const float alpha = 1.0f;
  if (beta == 0.0f && ZeroBeforeProduct()) {
    ZeroColumns(out.data, m, n, ldc);
    beta = 1.0f;
  }
  sgemm(&op_a.trans, &op_b.trans, &m_, &n_, &k_, &alpha, op_a.data, &lda_, op_b.data, &ldb_, &beta, out.data, &ldc_);
  return true;
}

at::Tensor RowsOfBias(const at::Tensor& bias, int64_t rows) {
  const int64_t cols = bias.numel();
  at::Tensor out = at::empty({rows, cols}, bias.options());
  const float* from = bias.data_ptr<float>();
  float* to = out.data_ptr<float>();
  const int64_t grain = std::max<int64_t>(1, kGrain / std::max<int64_t>(1, cols));
  at::parallel_for(0, rows, grain, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) std::memcpy(to + i * cols, from, cols * sizeof(float));
  });
  return out;
}

}  // namespace ct
