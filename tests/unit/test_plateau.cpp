// The C++ ReduceLROnPlateau must reproduce PyTorch's own, trace for trace, bit for bit.
// Traces: tests/data/plateau_traces.txt, written by tests/data/make_plateau_traces.py.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "train/plateau.h"

namespace ct {
namespace {

std::string Unquote(const std::string& s) { return s.size() >= 2 && s.front() == '\'' ? s.substr(1, s.size() - 2) : s; }

std::vector<double> Numbers(const std::string& text) {
  std::istringstream in(text);
  std::vector<double> values;
  for (std::string token; in >> token;) values.push_back(std::stod(token));
  return values;
}

TEST(Plateau, ReproducesEveryPyTorchTrace) {
  std::ifstream in(CT_TEST_DATA_DIR "/plateau_traces.txt");
  ASSERT_TRUE(in) << "missing " CT_TEST_DATA_DIR "/plateau_traces.txt";
  int traces = 0;
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    const auto bar1 = line.find('|');
    const auto bar2 = line.find('|', bar1 + 1);
    std::istringstream head(line.substr(0, bar1));
    std::string mode, threshold_mode;
    PlateauConfig config;
    double initial_lr = 0;
    head >> mode >> threshold_mode >> config.factor >> config.patience >> config.threshold >> config.cooldown >>
        config.min_lr >> config.eps >> initial_lr;
    ASSERT_TRUE(FromName(Unquote(mode), config.mode)) << mode;
    ASSERT_TRUE(FromName(Unquote(threshold_mode), config.threshold_mode)) << threshold_mode;
    const std::vector<double> metrics = Numbers(line.substr(bar1 + 1, bar2 - bar1 - 1));
    const std::vector<double> expected = Numbers(line.substr(bar2 + 1));
    ASSERT_EQ(metrics.size(), expected.size());
    PlateauScheduler scheduler(config, initial_lr);
    for (size_t i = 0; i < metrics.size(); ++i) {
      scheduler.Step(metrics[i]);
      ASSERT_EQ(scheduler.Lr(), expected[i]) << "trace: " << line << "\nstep " << i;
    }
    ++traces;
  }
  EXPECT_GT(traces, 1000);
}

TEST(Plateau, DropsOnThePatiencePlusFirstBadEpoch) {
  PlateauConfig config;  // min, factor 0.2, patience 4, threshold 1e-4 rel
  PlateauScheduler s(config, 1.0);
  EXPECT_FALSE(s.Step(1.0));                                            // first value is an improvement over +inf
  for (int bad = 1; bad <= 4; ++bad) EXPECT_FALSE(s.Step(1.0)) << bad;  // ties are bad epochs
  EXPECT_TRUE(s.Step(1.0));
  EXPECT_DOUBLE_EQ(s.Lr(), 0.2);
  EXPECT_EQ(s.Snapshot().bad_epochs, 0);
}

TEST(EarlyStopping, StopsAfterPatienceEpochsWithoutImprovement) {
  PlateauConfig config;
  EarlyStopping stop(config, 3);
  EXPECT_FALSE(stop.ShouldStop(1.0));
  EXPECT_FALSE(stop.ShouldStop(0.5));      // improvement
  EXPECT_FALSE(stop.ShouldStop(0.5));      // tie: 1
  EXPECT_FALSE(stop.ShouldStop(0.49999));  // below the 1e-4 relative threshold: 2
  EXPECT_TRUE(stop.ShouldStop(0.6));       // 3
  EarlyStopping never(config, 0);
  for (int i = 0; i < 20; ++i) EXPECT_FALSE(never.ShouldStop(1.0));
}

// A scheduler restored from a snapshot decides exactly as the one that took it.
TEST(Plateau, RestoredSchedulerContinuesIdentically) {
  PlateauConfig config;
  config.patience = 1;
  config.cooldown = 1;
  const std::vector<double> metrics = {1.0, 0.9, 0.9, 0.95, 0.8, 0.8, 0.8, 0.85, 0.7, 0.7, 0.7};
  for (size_t cut = 0; cut <= metrics.size(); ++cut) {
    PlateauScheduler straight(config, 1.0), first(config, 1.0), resumed(config, 123.0);
    EarlyStopping stop_straight(config, 2), stop_first(config, 2), stop_resumed(config, 2);
    for (size_t i = 0; i < cut; ++i) {
      first.Step(metrics[i]);
      stop_first.ShouldStop(metrics[i]);
    }
    resumed.Restore(first.Snapshot());
    stop_resumed.Restore(stop_first.Snapshot());
    for (size_t i = 0; i < metrics.size(); ++i) {
      const bool reduced = straight.Step(metrics[i]);
      const bool stops = stop_straight.ShouldStop(metrics[i]);
      if (i < cut) continue;
      EXPECT_EQ(resumed.Step(metrics[i]), reduced) << "cut " << cut << " epoch " << i;
      EXPECT_EQ(resumed.Lr(), straight.Lr()) << "cut " << cut << " epoch " << i;
      EXPECT_EQ(stop_resumed.ShouldStop(metrics[i]), stops) << "cut " << cut << " epoch " << i;
    }
  }
}

}  // namespace
}  // namespace ct
