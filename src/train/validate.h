// The validation loss over all ranks' rows, reduced as (sum, count): it equals the
// single-process mean over the whole validation set for any world size and any uneven split.
#pragma once

#include "comm/communicator.h"
#include "data/shard_loader.h"
#include "model/vae_mlp.h"

namespace ct {

struct ValLoss {
  double loss, mse, kl;
};

// Collective (one all-reduce). Uses z = mu, so the result is deterministic.
ValLoss Validate(VaeMlp& model, const ShardLoader& val, double beta, Communicator& comm);

}  // namespace ct
