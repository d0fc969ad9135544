#include "cluster/gpu_assignment.h"

#include <algorithm>
#include <map>

#include "util/error.h"

namespace ct {
namespace {

std::string Join(const std::vector<std::string>& items) {
  std::string text;
  for (const std::string& item : items) text += (text.empty() ? "" : ", ") + item;
  return text;
}

const char* kFix =
    "start one rank per GPU: srun --ntasks-per-node=<GPUs> --gpus-per-task=1, or mpirun -npernode <GPUs> "
    "(or train.device=cpu)";

// "node1 (ranks 0, 1), node2 (rank 2)": where the ranks of `picked` run.
std::string RanksByHost(const std::vector<std::string>& hosts, const std::vector<int>& picked) {
  std::vector<std::pair<std::string, std::vector<int>>> groups;
  for (const int rank : picked) {
    const auto same_host = [&](const auto& group) { return group.first == hosts[rank]; };
    auto group = std::find_if(groups.begin(), groups.end(), same_host);
    if (group == groups.end()) group = groups.insert(groups.end(), {hosts[rank], {}});
    group->second.push_back(rank);
  }
  std::string text;
  for (const auto& [host, ranks] : groups) {
    text += (text.empty() ? "" : ", ") + host + (ranks.size() == 1 ? " (rank " : " (ranks ");
    for (size_t i = 0; i < ranks.size(); ++i) text += (i ? ", " : "") + std::to_string(ranks[i]);
    text += ")";
  }
  return text;
}

}  // namespace

GpuAssignment AssignGpus(const std::vector<std::vector<std::string>>& visible, int local_rank,
                         const std::string& host) {
  const int local_size = static_cast<int>(visible.size());
  GpuAssignment result;
  result.bus_id_by_local_rank.resize(visible.size());
  std::map<std::vector<std::string>, std::vector<int>> groups;  // the list seen -> local ranks
  for (int q = 0; q < local_size; ++q) {
    if (visible[q].empty()) {
      throw ConfigError("on " + host + ", local rank " + std::to_string(q) + " of " + std::to_string(local_size) +
                        " sees no GPU (check CUDA_VISIBLE_DEVICES and the job's GPU request); " + kFix);
    }
    groups[visible[q]].push_back(q);
  }
  for (const auto& [gpus, ranks] : groups) {
    if (ranks.size() > gpus.size()) {
      throw ConfigError(std::to_string(ranks.size()) + " ranks on " + host + " see the same " +
                        std::to_string(gpus.size()) + " GPU(s) (" + Join(gpus) + "): more ranks than GPUs, and " +
                        "NCCL cannot run two ranks on one GPU; " + kFix);
    }
    for (size_t k = 0; k < ranks.size(); ++k) {
      result.bus_id_by_local_rank[ranks[k]] = gpus[k];
      if (ranks[k] == local_rank) result.device_index = static_cast<int>(k);
    }
  }
  std::map<std::string, int> user;  // bus id -> the first local rank using it
  for (int q = 0; q < local_size; ++q) {
    const auto [it, fresh] = user.emplace(result.bus_id_by_local_rank[q], q);
    if (!fresh) {
      throw ConfigError("on " + host + ", local ranks " + std::to_string(it->second) + " and " + std::to_string(q) +
                        " would both use GPU " + it->first + " (their CUDA_VISIBLE_DEVICES overlap); " + kFix);
    }
  }
  return result;
}

std::string DeviceKindMismatch(const std::vector<std::string>& hosts, const std::vector<bool>& uses_gpu) {
  std::vector<int> with_gpu, without_gpu;
  for (size_t rank = 0; rank < uses_gpu.size(); ++rank) {
    (uses_gpu[rank] ? with_gpu : without_gpu).push_back(static_cast<int>(rank));
  }
  if (with_gpu.empty() || without_gpu.empty()) return "";
  return "train.device=auto found GPUs for some ranks and none for others: GPUs on " + RanksByHost(hosts, with_gpu) +
         "; none on " + RanksByHost(hosts, without_gpu) +
         ". Every rank trains on the same kind of device: give the job GPUs on every node (Slurm: "
         "--gpus-per-node=N) or set train.device=cpu";
}

}  // namespace ct
