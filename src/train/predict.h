// `clustertrain predict`: a trained model's outputs for every row of an HDF5 file, written to a
// new HDF5 file in parallel.
//
// The model is rebuilt from the checkpoint's own config (--set overrides any key, e.g.
// train.device=cpu) and its weights. Each rank reads its contiguous slice of rows in pieces
// (collective MPI-IO; every field of data.fields the file holds), runs the model in eval mode
// (z = mu), and writes its rows of every batched output collectively, each a dataset of its name:
// a VAE's `recon` [N, ...], `mu` and `logvar` [N, latent]; a dict model's entries such as `mean`.
// The output appears under its name only when complete.
#pragma once

#include <string>
#include <vector>

#include "cluster/mpi_world.h"

namespace ct {

struct PredictOptions {
  std::string checkpoint;
  std::string data;
  std::string out;
  std::vector<std::string> overrides;  // --set KEY=VALUE on the checkpoint's config
  int64_t batch = 1024;                // rows per forward pass (and per collective read/write)
};

void RunPredict(const PredictOptions& options, const MpiWorld& world);

}  // namespace ct
