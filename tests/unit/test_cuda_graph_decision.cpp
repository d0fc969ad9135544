// runtime.cuda_graph (train/cuda_graph_step.h): where the step is captured, and the one reason
// logged where it is not.
#include <gtest/gtest.h>

#include "train/cuda_graph_step.h"

namespace ct {
namespace {

GraphFacts Capturable() {
  GraphFacts facts;
  facts.cuda = facts.built = facts.capturable_optimizer = true;
  return facts;
}

TEST(CudaGraphDecision, OnCapturesWhereEverythingAllows) {
  const GraphDecision d = DecideCudaGraph(AutoOnOff::kOn, Capturable());
  EXPECT_TRUE(d.use) << d.reason;
}

TEST(CudaGraphDecision, EachObstacleFallsBackWithItsReason) {
  const std::vector<std::pair<std::function<void(GraphFacts&)>, std::string>> cases = {
      {[](GraphFacts& f) { f.cuda = false; }, "a CPU device"},
      {[](GraphFacts& f) { f.built = false; }, "built without CUDA graphs"},
      {[](GraphFacts& f) { f.torchscript = true; }, "TorchScript"},
      {[](GraphFacts& f) { f.bf16 = true; }, "train.precision=bf16"},
      {[](GraphFacts& f) { f.accumulation = 4; }, "train.accumulation_steps > 1"},
      {[](GraphFacts& f) { f.capturable_optimizer = false; }, "fused Adam"},
      {[](GraphFacts& f) { f.skip_nonfinite = true; }, "train.on_nonfinite=skip"},
  };
  for (const auto& [change, why] : cases) {
    GraphFacts facts = Capturable();
    change(facts);
    const GraphDecision d = DecideCudaGraph(AutoOnOff::kOn, facts);
    EXPECT_FALSE(d.use) << why;
    EXPECT_EQ(d.reason.rfind("runtime.cuda_graph=on: eager steps (", 0), 0u) << d.reason;
    EXPECT_NE(d.reason.find(why), std::string::npos) << d.reason;
  }
}

TEST(CudaGraphDecision, OffAndAutoStayEager) {
  EXPECT_FALSE(DecideCudaGraph(AutoOnOff::kOff, Capturable()).use);
  const GraphDecision automatic = DecideCudaGraph(AutoOnOff::kAuto, Capturable());
  EXPECT_FALSE(automatic.use);
  EXPECT_NE(automatic.reason.find("checked on a GPU"), std::string::npos) << automatic.reason;
}

}  // namespace
}  // namespace ct
