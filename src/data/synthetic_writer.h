// `clustertrain make-data`: writes a synthetic chirp dataset in parallel.
#pragma once

#include <mpi.h>

#include <string>

#include "data/chirp.h"

namespace ct {

// Collective. Each rank generates and writes its own contiguous rows of "input" (noisy) and
// "target" (clean), both [rows, length] float32, chunked by rows. The file appears under
// `path` only when complete (written as path.tmp, then renamed).
void WriteChirpDataset(const std::string& path, int64_t rows, const ChirpOptions& options, MPI_Comm comm);

}  // namespace ct
