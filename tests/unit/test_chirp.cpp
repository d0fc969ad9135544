#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "data/chirp.h"

namespace ct {
namespace {

TEST(Chirp, RowsAreDeterministicPerSeedAndIndex) {
  ChirpOptions o;
  o.length = 256;
  std::vector<float> a(256), b(256), ca(256), cb(256);
  ChirpRow(o, 17, a.data(), ca.data());
  ChirpRow(o, 17, b.data(), cb.data());
  EXPECT_EQ(a, b);
  EXPECT_EQ(ca, cb);
  ChirpRow(o, 18, b.data(), cb.data());
  EXPECT_NE(ca, cb);
  o.seed = 2;
  ChirpRow(o, 17, b.data(), cb.data());
  EXPECT_NE(ca, cb);
}

TEST(Chirp, CleanWaveformPeaksNearMergerAndNoiseHasTheRequestedSpread) {
  ChirpOptions o;
  o.length = 1024;
  o.noise_std = 0.3;
  double noise_sq = 0;
  int n = 0;
  for (int64_t row = 0; row < 64; ++row) {
    std::vector<float> noisy(1024), clean(1024);
    ChirpRow(o, row, noisy.data(), clean.data());
    float peak = 0;
    for (int i = 0; i < 1024; ++i) {
      peak = std::max(peak, std::fabs(clean[i]));
      noise_sq += std::pow(noisy[i] - clean[i], 2);
      ++n;
    }
    EXPECT_LE(peak, 1.0f + 1e-5f);
    EXPECT_GT(peak, 0.3f);
    // The inspiral grows: the first tenth is quieter than the loudest part.
    float early = 0;
    for (int i = 0; i < 100; ++i) early = std::max(early, std::fabs(clean[i]));
    EXPECT_LT(early, peak);
  }
  EXPECT_NEAR(std::sqrt(noise_sq / n), 0.3, 0.01);
}

}  // namespace
}  // namespace ct
