#include "train/cuda_graph_step.h"

namespace ct {

GraphDecision DecideCudaGraph(AutoOnOff choice, const GraphFacts& facts) {
  const std::string name = std::string("runtime.cuda_graph=") + NameOf(choice) + ": ";
  const auto eager = [&](const std::string& why) { return GraphDecision{false, name + "eager steps (" + why + ")"}; };
  if (choice == AutoOnOff::kOff) return eager("off");
  if (!facts.cuda) return eager("a CPU device");
  if (!facts.built) return eager("this binary was built without CUDA graphs");
  if (choice == AutoOnOff::kAuto) {
    return eager("auto does not capture until the graph step has been checked on a GPU; runtime.cuda_graph=on does");
  }
  if (facts.torchscript) return eager("a TorchScript model may call what a graph cannot capture");
  if (facts.bf16) return eager("train.precision=bf16: autocast's cast cache cannot live in a graph");
  if (facts.accumulation > 1) return eager("train.accumulation_steps > 1");
  if (!facts.capturable_optimizer) return eager("this LibTorch has no fused Adam kernel with a tensor lr (< 2.4)");
  if (facts.skip_nonfinite) {
    return eager("train.on_nonfinite=skip needs the host's verdict between the loss and the update");
  }
  // Every batch is full (a rank's last rows short of a batch are never used), so one graph fits
  // every step.
  return {true, name + "forward, backward, all-reduce and Adam captured in one CUDA graph after 3 eager steps"};
}

}  // namespace ct
