// Where this rank runs: its device (GPU local rank % GPUs, or the CPU) and its cores.
#pragma once

#include <c10/core/Device.h>

#include "cluster/mpi_world.h"
#include "cluster/self_binding.h"
#include "util/config.h"

namespace ct {

struct Placement {
  c10::Device device = c10::Device(c10::kCPU);
  RankBinding binding;
};

// Collective. Chooses the device (train.device), binds to cores and sizes the thread pools
// (runtime.*), and prints every rank's placement from rank 0 in rank order.
Placement PlaceThisRank(const Config& config, const MpiWorld& world);

}  // namespace ct
