// The validation loss and metrics over all ranks' rows, reduced as (sum, count): they equal the
// single-process means over the whole validation set for any world size and any uneven split.
#pragma once

#include <vector>

#include "comm/communicator.h"
#include "data/shard_loader.h"
#include "model/model.h"
#include "util/choices.h"

namespace ct {

struct ValResult {
  double loss = 0;
  std::vector<double> metrics;  // in the model's MetricNames() order
};

// Collective (one all-reduce). The model in eval mode (z = mu), so the result is deterministic;
// the forward pass as in training (model/forward.h). A metric given per row is summed row by
// row; a batch mean counts for each of the batch's rows.
ValResult Validate(Model& model, const ShardLoader& val, Precision precision, Communicator& comm);

}  // namespace ct
