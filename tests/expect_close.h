// Two tensors equal within a tolerance: the check of every test that compares clustertrain's
// own kernels with LibTorch's functions. Each test names the tolerance its arithmetic allows.
#pragma once

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <string>

namespace ct::test {

struct Tolerance {
  double rtol, atol;
};

inline void ExpectClose(const at::Tensor& a, const at::Tensor& b, const std::string& what, Tolerance tolerance) {
  ASSERT_TRUE(a.defined() && b.defined()) << what;
  ASSERT_EQ(a.sizes(), b.sizes()) << what;
  EXPECT_TRUE(at::allclose(a, b, tolerance.rtol, tolerance.atol))
      << what << ": max |diff| " << (a - b).abs().max().item<float>();
}

}  // namespace ct::test
