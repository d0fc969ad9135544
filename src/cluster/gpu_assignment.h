// Which GPU each rank on a node uses, decided from what every local rank sees.
//
// Launchers expose GPUs two ways: every rank sees all of the node's GPUs (mpirun; srun
// --gpus-per-node), or each rank sees only its own (srun --gpus-per-task=1 sets
// CUDA_VISIBLE_DEVICES per task, so every rank's GPU is its device 0). The local ranks gather
// the PCI bus ids of the GPUs they see (GpuBusIds) and each decides the same way:
//   1. ranks that see the same list form a group, in local-rank order;
//   2. the k-th rank of a group uses the k-th GPU of its list (one GPU a rank: index 0);
//   3. a group with more ranks than GPUs, a rank that sees no GPU, or two ranks that would share
//      one GPU is an error naming the counts and the fix (no silent second rank on a GPU).
// The result also gives every local rank's GPU bus id, so each rank binds to the cores of its
// own GPU's socket even when it cannot see its neighbours' GPUs.
#pragma once

#include <string>
#include <vector>

namespace ct {

struct GpuAssignment {
  int device_index = 0;                           // this rank's CUDA device (among those it sees)
  std::vector<std::string> bus_id_by_local_rank;  // the GPU each local rank uses
};

// visible[q]: the bus ids local rank q sees, in its CUDA device order. Throws ConfigError.
GpuAssignment AssignGpus(const std::vector<std::vector<std::string>>& visible, int local_rank, const std::string& host);

// Across nodes: "" when every rank trains on the same kind of device, else the message naming
// the hosts and ranks with and without a GPU, and the fix. hosts[r], uses_gpu[r]: rank r's.
// (train.device=auto on a job whose nodes did not all get GPUs; within a node AssignGpus tells.)
std::string DeviceKindMismatch(const std::vector<std::string>& hosts, const std::vector<bool>& uses_gpu);

}  // namespace ct
