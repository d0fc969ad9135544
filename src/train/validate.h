// The validation loss over all ranks' rows, reduced as (sum, count): it equals the
// single-process mean over the whole validation set for any world size and any uneven split.
#pragma once

#include "comm/communicator.h"
#include "data/shard_loader.h"
#include "model/model.h"
#include "util/choices.h"

namespace ct {

struct ValLoss {
  double loss, mse, kl;
};

// Collective (one all-reduce). The model in eval mode (z = mu), so the result is deterministic;
// the forward pass as in training (model/forward.h).
ValLoss Validate(Model& model, const ShardLoader& val, double beta, Precision precision, Communicator& comm);

}  // namespace ct
