// The one place that chooses a communication backend.
#pragma once

#include <memory>
#include <string>

#include "cluster/mpi_world.h"
#include "comm/communicator.h"
#include "util/config.h"

namespace ct {

// What runtime.backend (auto: nccl for CUDA devices, mpi for CPU; mpi; nccl) means on
// `device`: kMpi or kNccl. Throws ConfigError for a combination that cannot work. No
// communication, so every rank can check it before any collective.
BackendChoice ChooseBackend(const RuntimeConfig& runtime, const c10::Device& device);

// Collective. Builds the backend ChooseBackend names and logs the choice.
std::unique_ptr<Communicator> MakeCommunicator(const RuntimeConfig& runtime, const MpiWorld& world,
                                               const c10::Device& device);

// The ranks on this node, over MPI, where runtime.shard_optimizer splits the optimizer's update
// among them: CPU training with more than one rank on the node. Null elsewhere (a GPU's
// optimizer streams its own memory, so nothing is repeated there). No communication.
std::unique_ptr<Communicator> MakeOptimizerShardCommunicator(const RuntimeConfig& runtime, const MpiWorld& world,
                                                             const c10::Device& device);

// The backends this binary was built with, e.g. "mpi, nccl".
std::string BuiltBackends();

}  // namespace ct
