// model/cpu_sgemm: products through the BLAS's sgemm_ directly are ATen's bit for bit, for every
// layout ATen hands to the BLAS itself, and are declined for the others.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <limits>
#include <string>
#include <vector>

#include "model/cpu_sgemm.h"

namespace ct {
namespace {

using torch::indexing::Slice;

// A [rows, cols] matrix of random values in one of the layouts a layer's tensors have.
enum class Layout { kContiguous, kTransposed, kColumnSlice };

torch::Tensor MatrixIn(Layout layout, int64_t rows, int64_t cols) {
  switch (layout) {
    case Layout::kContiguous:
      return torch::randn({rows, cols});
    case Layout::kTransposed:  // W.t() of a contiguous W
      return torch::randn({cols, rows}).t();
    case Layout::kColumnSlice:  // rows further apart than their length (chunk()'s halves)
      return torch::randn({rows, cols + 3}).index({Slice(), Slice(1, 1 + cols)});
  }
  return {};
}

std::string Describe(Layout layout) {
  return layout == Layout::kContiguous ? "contiguous" : layout == Layout::kTransposed ? "transposed" : "column slice";
}

TEST(CpuSgemm, FindsTheBlasLibTorchUses) {
  // Pip's LibTorch exports its MKL's sgemm_; Debian's loads libblas.so.3. Without it the layers
  // still give the same numbers, through ATen's operators, only slower.
  EXPECT_TRUE(HasBlasSgemm());
}

TEST(CpuSgemm, EqualsAtenMmAndAddmmBitForBit) {
  ASSERT_TRUE(HasBlasSgemm());
  // Sizes of 1 (ATen adjusts the leading dimensions), odd ones, and the demo's layers.
  const std::vector<std::vector<int64_t>> shapes = {{1, 1, 1},    {1, 7, 5},        {6, 1, 4},      {5, 3, 1},
                                                    {11, 37, 19}, {128, 1024, 512}, {128, 16, 256}, {512, 128, 1024}};
  const Layout layouts[] = {Layout::kContiguous, Layout::kTransposed, Layout::kColumnSlice};
  torch::manual_seed(8);
  for (const auto& s : shapes) {
    const int64_t m = s[0], k = s[1], n = s[2];
    for (Layout la : layouts) {
      for (Layout lb : layouts) {
        for (float beta : {0.0f, 1.0f}) {
          SCOPED_TRACE(std::to_string(m) + "x" + std::to_string(k) + " @ " + std::to_string(k) + "x" +
                       std::to_string(n) + ", a " + Describe(la) + ", b " + Describe(lb) + ", beta " +
                       std::to_string(beta));
          const torch::Tensor a = MatrixIn(la, m, k), b = MatrixIn(lb, k, n);
          const torch::Tensor start = torch::randn({m, n});
          torch::Tensor aten = start.clone(), direct = start.clone();
          if (beta == 0.0f) {
            at::mm_out(aten, a, b);
          } else {
            aten.addmm_(a, b);
          }
          ASSERT_TRUE(BlasProductInto(FloatMatrix::Of(a), FloatMatrix::Of(b), beta, FloatMatrix::Of(direct)));
          EXPECT_TRUE(torch::equal(direct, aten)) << "max |diff| " << (direct - aten).abs().max().item<float>();
        }
      }
    }
  }
}

TEST(CpuSgemm, ColumnMajorResultsEqualAtens) {
  torch::manual_seed(9);
  const torch::Tensor a = torch::randn({9, 13}), b = torch::randn({13, 6});
  torch::Tensor aten = torch::empty({6, 9}).t(), direct = torch::empty({6, 9}).t();  // [9, 6], columns contiguous
  at::mm_out(aten, a, b);
  ASSERT_TRUE(BlasProductInto(FloatMatrix::Of(a), FloatMatrix::Of(b), 0.0f, FloatMatrix::Of(direct)));
  EXPECT_TRUE(torch::equal(direct, aten));
}

TEST(CpuSgemm, BetaZeroOverwritesStaleValuesAndNothingBesideTheResult) {
  // beta 0 over a stale .grad: its NaNs are not read (BLAS semantics; with OpenBLAS's Zen kernel
  // the result is zeroed here first), and a result inside a wider tensor (rows further apart than
  // their length) leaves the columns beside it as they were.
  torch::manual_seed(10);
  const torch::Tensor a = torch::randn({128, 64}), b = torch::randn({64, 300});
  torch::Tensor wide = torch::full({128, 310}, std::numeric_limits<float>::quiet_NaN());
  wide.index_put_({Slice(), Slice(0, 5)}, 7.0f);
  wide.index_put_({Slice(), Slice(305, 310)}, 7.0f);
  const torch::Tensor out = wide.index({Slice(), Slice(5, 305)});
  ASSERT_TRUE(BlasProductInto(FloatMatrix::Of(a), FloatMatrix::Of(b), 0.0f, FloatMatrix::Of(out)));
  EXPECT_TRUE(torch::equal(out, at::mm(a, b)));
  EXPECT_TRUE(torch::equal(wide.index({Slice(), Slice(0, 5)}), torch::full({128, 5}, 7.0f)));
  EXPECT_TRUE(torch::equal(wide.index({Slice(), Slice(305, 310)}), torch::full({128, 5}, 7.0f)));
}

TEST(CpuSgemm, DeclinesLayoutsAtenWouldCopyAndEmptyProducts) {
  const torch::Tensor every_other_column = torch::randn({8, 20}).index({Slice(), Slice(0, 20, 2)});  // [8, 10]
  const torch::Tensor b = torch::randn({10, 4});
  torch::Tensor out = torch::full({8, 4}, 7.0f);
  EXPECT_FALSE(BlasProductInto(FloatMatrix::Of(every_other_column), FloatMatrix::Of(b), 0.0f, FloatMatrix::Of(out)));
  const torch::Tensor strided_out = torch::zeros({8, 8}).index({Slice(), Slice(0, 8, 2)});  // [8, 4], no unit stride
  EXPECT_FALSE(
      BlasProductInto(FloatMatrix::Of(torch::randn({8, 10})), FloatMatrix::Of(b), 0.0f, FloatMatrix::Of(strided_out)));
  const torch::Tensor no_inner = torch::randn({8, 0}), none = torch::randn({0, 4});
  EXPECT_FALSE(BlasProductInto(FloatMatrix::Of(no_inner), FloatMatrix::Of(none), 0.0f, FloatMatrix::Of(out)));
  EXPECT_FALSE(BlasProductInto(FloatMatrix::Of(b).T(), FloatMatrix::Of(b), 0.0f, FloatMatrix::Of(out)));  // 4x4 != 8x4
  EXPECT_TRUE(torch::equal(out, torch::full({8, 4}, 7.0f)));  // left as it was
}

TEST(CpuSgemm, RowsOfBiasRepeatTheBiasInEveryRow) {
  for (int64_t rows : {1, 3, 128}) {
    const torch::Tensor bias = torch::randn({1024});
    const torch::Tensor rows_of_bias = RowsOfBias(bias, rows);
    EXPECT_TRUE(rows_of_bias.is_contiguous());
    EXPECT_TRUE(torch::equal(rows_of_bias, bias.expand({rows, 1024})));
  }
}

}  // namespace
}  // namespace ct
