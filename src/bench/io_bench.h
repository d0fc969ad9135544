// `clustertrain bench io`: how fast each rank gets its training rows, against the page cache.
//
// At the launched world size, interleaved over --repeats rounds (medians reported):
//   page cache  each rank preads its byte range of the file (already cached by a warm-up read):
//               the ceiling for any HDF5 reader on this node;
//   static      each rank's contiguous slice, read collectively with MPI-IO (data.sharding=static);
//   blocks      one epoch of this rank's blocks through the reader thread, batches taken as
//               fast as they come (data.sharding=blocks, no compute to hide behind);
//   seed layout (--seed FILE) this rank's share of a one-group-per-sample file, read sample by
//               sample through the converter's reader: what the Python pipeline did.
// Rank 0 prints a table: per-rank MB/s (mean over ranks), aggregate MB/s (bytes of all ranks
// over the slowest rank's time) and aggregate as a percentage of the page-cache read.
//
// With --as NAME=FILES (the same rows stored another way: several files, float64, a virtual
// dataset), a second table: each form read through the training loaders themselves
// (ShardLoader::Load for static, a BlockStream epoch for blocks), the file's float32 rows as the
// first form, in the same interleaved rounds; MB/s of float32 rows delivered, and the ratio to
// the float32 file's.
#pragma once

#include <string>
#include <vector>

#include "cluster/mpi_world.h"

namespace ct {

struct IoBenchOptions {
  std::string file;                // contiguous layout (input, target)
  std::string seed_file;           // optional: the same rows in the one-group-per-sample layout
  std::vector<std::string> forms;  // "NAME=FILES": the same rows stored another way
  int repeats = 5;
  int64_t batch = 128;  // rows per batch for the blocks stream
};

void RunIoBench(const IoBenchOptions& options, const MpiWorld& world);

}  // namespace ct
