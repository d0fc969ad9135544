#include "train/optimizer.h"

#include "train/flat_adam.h"
#include "train/flat_sgd.h"

namespace ct {

std::unique_ptr<Optimizer> MakeOptimizer(const TrainConfig& train, std::vector<at::Tensor> params,
                                         std::vector<GradientBucket> buckets, bool fused, bool one_pass,
                                         Communicator* shard_over) {
  switch (train.optimizer) {
    case OptimizerKind::kSgd:
      return std::make_unique<FlatSgd>(std::move(params), std::move(buckets), train.momentum, train.weight_decay);
    case OptimizerKind::kAdam:
    case OptimizerKind::kAdamW: {
      AdamSettings adam;
      adam.weight_decay = train.weight_decay;
      adam.decoupled = train.optimizer == OptimizerKind::kAdamW;
      adam.fused = fused;
      adam.one_pass = one_pass;
      adam.shard_over = shard_over;
      return std::make_unique<FlatAdam>(std::move(params), std::move(buckets), adam);
    }
  }
  return nullptr;
}

}  // namespace ct
