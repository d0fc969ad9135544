// The NCCL backend, where it can run: a build with NCCL, a CUDA LibTorch and one GPU per rank.
// Elsewhere every test here reports as skipped, with the reason.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "mpi/mpi_test_world.h"
#ifdef CT_HAVE_NCCL
#include "comm/gradient_sync.h"
#include "comm/mpi_communicator.h"
#include "comm/nccl_communicator.h"
#include "model/vae_loss.h"
#include "model/vae_mlp.h"
#include "train/cuda_graph_step.h"
#include "train/flat_adam.h"
#include "util/error.h"
#endif

namespace ct {
namespace {

// "" when this process can run NCCL tests; else why not (the same verdict on every rank).
std::string WhyNoNccl() {
#ifndef CT_HAVE_NCCL
  return "built without NCCL (CT_WITH_NCCL found no nccl.h/libnccl)";
#else
  const int ranks = test::World().Size();
  const bool cuda = torch::cuda::is_available();
  const int gpus = cuda ? static_cast<int>(torch::cuda::device_count()) : 0;
  const bool enough = test::AllRanksAgree(test::World().LocalSize() <= gpus);
  if (!cuda) return "this LibTorch has no CUDA or no GPU is visible";
  if (!enough) return std::to_string(ranks) + " ranks but " + std::to_string(gpus) + " GPU(s): NCCL needs one each";
  return "";
#endif
}

#define SKIP_WITHOUT_NCCL()                \
  do {                                     \
    const std::string why = WhyNoNccl();   \
    if (!why.empty()) GTEST_SKIP() << why; \
  } while (0)

#ifdef CT_HAVE_NCCL
const std::vector<int64_t> kGpuHidden = {32, 16};
at::TensorOptions OnGpu(at::ScalarType dtype) {
  return at::TensorOptions().dtype(dtype).device(at::kCUDA, test::World().LocalRank());
}
#endif

TEST(Nccl, CollectivesOverOddSizesAndDtypes) {
  SKIP_WITHOUT_NCCL();
#ifdef CT_HAVE_NCCL
  NcclCommunicator comm(MPI_COMM_WORLD, test::World().LocalRank(), 60.0);
  const int w = comm.Size(), r = comm.Rank();
  bool ok = true;
  for (auto dtype : {at::kFloat, at::kDouble, at::kLong}) {
    for (int64_t n : {1, 7, 1001, 65537}) {
      at::Tensor t = at::arange(n, OnGpu(dtype)) * (r + 1);
      comm.AllReduceSum(t);
      ok = ok && t.cpu().equal(at::arange(n, dtype) * static_cast<int64_t>(w * (w + 1) / 2));
    }
  }
  at::Tensor avg = at::full({333}, static_cast<float>(r), OnGpu(at::kFloat));
  comm.AllReduceAverageAsync(avg)->Wait();
  ok = ok && at::allclose(avg.cpu(), at::full({333}, (w - 1) / 2.0f));
  at::Tensor root = at::full({5, 3}, static_cast<float>(r), OnGpu(at::kFloat));
  comm.Broadcast(root, w - 1);
  ok = ok && root.cpu().equal(at::full({5, 3}, static_cast<float>(w - 1)));
  at::Tensor all = comm.AllGather(at::full({2}, static_cast<double>(r), OnGpu(at::kDouble)));
  ok = ok && all.cpu().equal(at::arange(w, at::kDouble).unsqueeze(1).expand({w, 2}));
  // Several tensors at once: one NCCL group, one Work each, each averaged, repeated so that the
  // pooled events are reused.
  for (int round = 0; round < 3; ++round) {
    std::vector<at::Tensor> each = {at::full({17}, static_cast<float>(r), OnGpu(at::kFloat)),
                                    at::full({4099}, static_cast<float>(2 * r + round), OnGpu(at::kFloat)),
                                    at::full({1}, static_cast<float>(-r), OnGpu(at::kFloat))};
    std::vector<std::unique_ptr<Work>> works = comm.AllReduceAverageAsyncEach(each);
    ok = ok && works.size() == each.size();
    for (auto& work : works) work->Wait();
    ok = ok && at::allclose(each[0].cpu(), at::full({17}, (w - 1) / 2.0f)) &&
         at::allclose(each[1].cpu(), at::full({4099}, (w - 1) + static_cast<float>(round))) &&
         at::allclose(each[2].cpu(), at::full({1}, -(w - 1) / 2.0f));
  }
  comm.Barrier();
  EXPECT_TRUE(test::AllRanksAgree(ok));
  at::Tensor on_cpu = at::zeros({4});
  EXPECT_THROW(comm.AllReduceSum(on_cpu), CommError);
#endif
}

TEST(Nccl, BucketedOverlappedSyncOnGpuEqualsMpiOnCpu) {
  SKIP_WITHOUT_NCCL();
#ifdef CT_HAVE_NCCL
  NcclCommunicator nccl(MPI_COMM_WORLD, test::World().LocalRank(), 60.0);
  MpiCommunicator mpi(MPI_COMM_WORLD);
  const int64_t w = nccl.Size(), r = nccl.Rank(), batch = 8;
  torch::manual_seed(11);
  VaeMlp cpu_model(64, kGpuHidden, 4);
  torch::manual_seed(11);
  VaeMlp gpu_model(64, kGpuHidden, 4);
  gpu_model->to(at::Device(at::kCUDA, test::World().LocalRank()));
  GradientSync cpu_sync(cpu_model->parameters(), mpi, {0.002, true});
  GradientSync gpu_sync(gpu_model->parameters(), nccl, {0.002, true});
  torch::manual_seed(12);
  at::Tensor x = torch::randn({w * batch, 64}).narrow(0, r * batch, batch);
  at::Tensor eps = torch::randn({w * batch, 4}).narrow(0, r * batch, batch);
  for (auto [model, sync, device] :
       {std::tuple{&cpu_model, &cpu_sync, at::Device(at::kCPU)},
        std::tuple{&gpu_model, &gpu_sync, at::Device(at::kCUDA, test::World().LocalRank())}}) {
    (*model)->zero_grad();
    sync->PrepareBackward(true);
    VaeBatchLoss(VaePerSampleLoss((*model)->forward(x.to(device), eps.to(device)), x.to(device)), 1e-3).backward();
    sync->AverageGradients();
  }
  bool ok = true;
  auto a = cpu_model->parameters(), b = gpu_model->parameters();
  for (size_t i = 0; i < a.size(); ++i) ok = ok && at::allclose(a[i].grad(), b[i].grad().cpu(), 1e-4, 1e-6);
  EXPECT_TRUE(test::AllRanksAgree(ok));
#endif
}

// Issue 32, item 1: the graph captures a whole step -- forward, the backward whose gradient
// hooks launch each bucket's all-reduce, fused Adam -- when the step stream is current from the
// model's construction on; the replayed steps equal the same steps run eagerly.
TEST(Nccl, CudaGraphStepCapturesTheBucketedBackwardAndEqualsEagerSteps) {
  SKIP_WITHOUT_NCCL();
#ifdef CT_HAVE_NCCL
  const at::Device device(at::kCUDA, test::World().LocalRank());
  NcclCommunicator nccl(MPI_COMM_WORLD, test::World().LocalRank(), 60.0);
  const int64_t batch = 16;
  torch::manual_seed(3);
  const at::Tensor x = torch::randn({batch, 64}).to(device), eps = torch::randn({batch, 4}).to(device);
  std::vector<at::Tensor> losses[2];
  for (const bool captured : {false, true}) {
    const std::unique_ptr<StepStream> stream = MakeStepStream(device);  // before any autograd node
    ASSERT_TRUE(stream != nullptr);
    torch::manual_seed(11);
    VaeMlp model(64, kGpuHidden, 4);
    model->to(device);
    std::vector<at::Tensor> params = model->parameters();
    GradientSync sync(params, nccl, {0.002, true});  // several buckets, reduced during backward
    AdamSettings adam;
    adam.fused = true;
    FlatAdam optimizer(params, sync.Buckets(), adam);
    ASSERT_TRUE(optimizer.Capturable());
    const at::Tensor lr = at::full({}, 1e-3, OnGpu(at::kFloat));
    const StepBody body = [&](const Batch& b) {
      optimizer.ZeroGrad();
      const at::Tensor loss = VaeBatchLoss(VaePerSampleLoss(model->forward(b["input"], eps), b["target"]), 1e-3);
      sync.PrepareBackward(true);
      loss.backward();
      sync.AverageGradients();
      optimizer.StepOnDevice(lr);
      return loss.detach().reshape({1});
    };
    const std::unique_ptr<GraphStep> graph = captured ? MakeCudaGraphStep(device, /*warmup_steps=*/2) : nullptr;
    for (int step = 0; step < 6; ++step) {
      const Batch b{{"input", "target"}, {x, x}};
      const at::Tensor loss = graph ? graph->Run(b, body) : body(b);
      if (graph) optimizer.CountStep();
      losses[captured].push_back(loss.clone().cpu());
    }
  }
  bool ok = true;
  for (size_t i = 0; i < losses[0].size(); ++i) ok = ok && at::allclose(losses[0][i], losses[1][i], 1e-5, 1e-7);
  EXPECT_TRUE(test::AllRanksAgree(ok));
#endif
}

}  // namespace
}  // namespace ct
