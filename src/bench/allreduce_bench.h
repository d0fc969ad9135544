// `clustertrain bench allreduce`: what gradient synchronisation costs, as tables.
//
// Table 1, the demo model's gradients all-reduced several ways, interleaved, medians:
//   one raw all-reduce of all the bytes (the bound), the same followed by the division that
//   averaging costs, bucketed at several bucket sizes (gradients already in the buckets, as
//   backward leaves them), and one all-reduce per parameter.
// Table 2, a full training step (forward, backward, gradient sync, Adam) with overlap on and
// off, beside the same step with no communication at all.
#pragma once

#include "cluster/mpi_world.h"
#include "util/config.h"

namespace ct {

struct AllReduceBenchOptions {
  int64_t length = 1024;  // waveform length: the demo data's
  int iterations = 30;    // timed repetitions of each variant
};

// Collective over the world; rank 0 prints the tables.
void RunAllReduceBench(const Config& config, const MpiWorld& world, const AllReduceBenchOptions& options);

}  // namespace ct
