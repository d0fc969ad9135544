// FlatSgd against PyTorch's own torch.optim.SGD (momentum 0.9, with and without an L2 weight
// decay) over the recorded steps of tests/data/optimizer_reference.pt, the parameters split over
// two flat groups; and the optimizer factory's choice by train.optimizer.
#include <gtest/gtest.h>

#include <string>

#include "train/flat_sgd.h"
#include "unit/optimizer_reference.h"

namespace ct {
namespace {

void CheckAgainst(const std::string& name, double weight_decay) {
  const c10::impl::GenericDict reference = test::LoadOptimizerReference();
  std::vector<at::Tensor> params = test::InitialParams(reference);
  FlatSgd sgd(params, test::TwoBuckets(params), /*momentum=*/0.9, weight_decay);
  const at::Tensor lrs = reference.at("lrs").toTensor();
  for (int64_t step = 0; step < lrs.size(0); ++step) {
    test::SetRecordedGradients(sgd, params, reference, step);
    sgd.Step(lrs[step].item<double>());
  }
  EXPECT_EQ(sgd.Steps(), 100);
  test::ExpectLikeReference(sgd, params, reference, name);
}

TEST(FlatSgd, EqualsTorchOptimSgdWithMomentumOver100Steps) { CheckAgainst("sgd", 0.0); }

TEST(FlatSgd, EqualsTorchOptimSgdWithL2DecayOver100Steps) { CheckAgainst("sgd_l2", 0.1); }

TEST(Optimizer, TrainOptimizerChoosesTheClass) {
  for (const auto& [kind, describes] :
       std::vector<std::pair<OptimizerKind, std::string>>{{OptimizerKind::kSgd, "SGD (momentum 0.9)"},
                                                          {OptimizerKind::kAdamW, "Adam over"},  // no decay: Adam
                                                          {OptimizerKind::kAdam, "Adam over"}}) {
    std::vector<at::Tensor> params = {at::zeros({3}).requires_grad_(true)};
    TrainConfig train;
    train.optimizer = kind;
    const std::unique_ptr<Optimizer> optimizer = MakeOptimizer(train, params, OwnGradients(params), false);
    EXPECT_EQ(optimizer->Describe().rfind(describes, 0), 0u) << optimizer->Describe();
  }
  std::vector<at::Tensor> params = {at::zeros({3}).requires_grad_(true)};
  TrainConfig train;
  train.weight_decay = 0.1;
  EXPECT_EQ(MakeOptimizer(train, params, OwnGradients(params), false)->Describe().rfind("AdamW", 0), 0u);
}

}  // namespace
}  // namespace ct
