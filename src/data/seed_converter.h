// `clustertrain convert`: the seed's one-group-per-sample file to the contiguous layout that
// training reads (datasets input [N, ...] and target [N, ...], float32, chunked by rows).
//
// Runs on any number of ranks: each reads its own samples through SeedLayoutReader (no MPI)
// and writes them collectively in pieces, so memory stays bounded whatever the file size. The
// output appears under its name only when complete (and verified, with --verify).
#pragma once

#include <string>

#include "cluster/mpi_world.h"

namespace ct {

struct ConvertOptions {
  std::string seed_path;
  std::string out_path;
  bool verify = false;       // after writing, compare every sample with the seed file
  bool verify_only = false;  // compare an existing output, write nothing
  bool progress = true;      // rank 0 prints progress lines
};

// Collective. Throws DataError (agreed: the same on every rank) when a sample differs.
void ConvertSeedLayout(const ConvertOptions& options, const MpiWorld& world);

}  // namespace ct
