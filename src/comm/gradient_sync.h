// Data-parallel synchronisation of a model's parameters and gradients.
//
// Gradients are packed into one flat buffer and averaged with a single all-reduce after
// backward (one large message instead of one per parameter). The buffer is allocated once.
#pragma once

#include <ATen/ATen.h>

#include <vector>

#include "comm/communicator.h"

namespace ct {

class GradientSync {
 public:
  GradientSync(std::vector<at::Tensor> parameters, Communicator& comm);

  // Every rank's parameters <- rank 0's, so that all ranks start from the same weights.
  void BroadcastParameters();

  // Every parameter's .grad <- mean over ranks. A parameter without a gradient counts as zero.
  void AverageGradients();

  int64_t NumElements() const { return flat_.numel(); }

 private:
  std::vector<at::Tensor> parameters_;
  Communicator& comm_;
  at::Tensor flat_;  // [sum of numel], on the parameters' device
};

}  // namespace ct
