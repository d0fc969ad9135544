// The one place that chooses a communication backend.
#pragma once

#include <memory>
#include <string>

#include "cluster/mpi_world.h"
#include "comm/communicator.h"
#include "util/config.h"

namespace ct {

// runtime.backend: "auto" (nccl for CUDA devices, mpi for CPU), "mpi" or "nccl". Logs the choice.
std::unique_ptr<Communicator> MakeCommunicator(const RuntimeConfig& runtime, const MpiWorld& world,
                                               const c10::Device& device);

// The backends this binary was built with, e.g. "mpi, nccl".
std::string BuiltBackends();

}  // namespace ct
