// Bucketed, overlapped gradient synchronisation: an N-rank run equals a 1-rank run over the same
// global batches, whatever the bucket size, with overlap on or off and with or without gradient
// accumulation; and communication happens when it should (during backward, last micro-batch).
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "comm/gradient_sync.h"
#include "comm/mpi_communicator.h"
#include "model/vae_loss.h"
#include "model/vae_mlp.h"
#include "mpi/mpi_test_world.h"

namespace ct {
namespace {

constexpr int64_t kBucketedLength = 48, kBucketedLatent = 4, kMicroBatch = 4, kSteps = 20;
const std::vector<int64_t> kBucketedHidden = {40, 12};  // encoder.0.weight: 1,920 floats = 7.5 KiB

at::Tensor StepLoss(VaeMlp& model, const at::Tensor& x, const at::Tensor& y, const at::Tensor& eps) {
  return VaeBatchLoss(VaePerSampleLoss(model->forward(x, eps), y), 1e-2);
}

struct Case {
  bool overlap;
  int64_t accumulation;
  double bucket_mb;
};

std::string Describe(const Case& c) {
  return "overlap=" + std::to_string(c.overlap) + " accumulation=" + std::to_string(c.accumulation) +
         " bucket_mb=" + std::to_string(c.bucket_mb);
}

// Trains `kSteps` SGD steps two ways on every rank: data-parallel over the world (each rank its
// slice of each global batch, in micro-batches), and alone on the whole global batch. Returns
// the largest relative difference between the two models' parameters.
double MaxRelativeDifference(const Case& c, MpiCommunicator& comm, int* buckets) {
  const int64_t w = comm.Size(), r = comm.Rank();
  const int64_t global = w * c.accumulation * kMicroBatch;
  torch::manual_seed(7);
  VaeMlp parallel(kBucketedLength, kBucketedHidden, kBucketedLatent);
  torch::manual_seed(7);
  VaeMlp alone(kBucketedLength, kBucketedHidden, kBucketedLatent);
  auto options = torch::optim::SGDOptions(0.05).momentum(0.9);
  torch::optim::SGD parallel_opt(parallel->parameters(), options);
  torch::optim::SGD alone_opt(alone->parameters(), options);
  GradientSync sync(parallel->parameters(), comm, {c.bucket_mb, c.overlap});
  *buckets = sync.NumBuckets();

  for (int64_t step = 0; step < kSteps; ++step) {
    torch::manual_seed(1000 + step);  // the same global batch on every rank
    at::Tensor x = torch::randn({global, kBucketedLength}), y = torch::randn({global, kBucketedLength});
    at::Tensor eps = torch::randn({global, kBucketedLatent});

    alone_opt.zero_grad();
    StepLoss(alone, x, y, eps).backward();
    alone_opt.step();

    parallel_opt.zero_grad();
    for (int64_t micro = 0; micro < c.accumulation; ++micro) {
      const int64_t begin = (r * c.accumulation + micro) * kMicroBatch;
      auto mine = [&](const at::Tensor& t) { return t.narrow(0, begin, kMicroBatch); };
      sync.PrepareBackward(micro == c.accumulation - 1);
      (StepLoss(parallel, mine(x), mine(y), mine(eps)) / static_cast<double>(c.accumulation)).backward();
    }
    sync.AverageGradients();
    parallel_opt.step();
  }
  double worst = 0;
  auto a = parallel->parameters(), b = alone->parameters();
  for (size_t i = 0; i < a.size(); ++i) {
    worst = std::max(worst, ((a[i] - b[i]).norm() / b[i].norm()).item<double>());
  }
  return worst;
}

TEST(BucketedSync, NRanksEqualOneRankOverTheSameGlobalBatches) {
  MpiCommunicator comm(MPI_COMM_WORLD);
  for (bool overlap : {true, false}) {
    for (int64_t accumulation : {1, 3}) {
      // One bucket for everything; and 4 KiB buckets: many, and parameters larger than one.
      for (double bucket_mb : {25.0, 4.0 / 1024}) {
        const Case c{overlap, accumulation, bucket_mb};
        int buckets = 0;
        const double difference = MaxRelativeDifference(c, comm, &buckets);
        EXPECT_TRUE(test::AllRanksAgree(difference < 1e-5)) << Describe(c) << ": relative difference " << difference;
        EXPECT_EQ(buckets > 1, bucket_mb < 1) << Describe(c) << ": " << buckets << " buckets";
      }
    }
  }
}

// ClipGradNorm over the flat buckets against LibTorch's torch::nn::utils::clip_grad_norm_ (the
// C++ twin of torch.nn.utils.clip_grad_norm_, per-parameter norms) on a 1-rank model given the
// whole global batch: the same norm and the same clipped gradients, in one bucket or many;
// a bound above the norm leaves the gradients as they are.
TEST(BucketedSync, ClipGradNormMatchesPyTorchsClipGradNorm) {
  MpiCommunicator comm(MPI_COMM_WORLD);
  const int64_t w = comm.Size(), r = comm.Rank();
  for (double bucket_mb : {25.0, 4.0 / 1024}) {
    for (double fraction : {0.1, 10.0}) {  // max_norm as a fraction of the gradients' norm
      torch::manual_seed(7);
      VaeMlp parallel(kBucketedLength, kBucketedHidden, kBucketedLatent);
      torch::manual_seed(7);
      VaeMlp alone(kBucketedLength, kBucketedHidden, kBucketedLatent);
      GradientSync sync(parallel->parameters(), comm, {bucket_mb, true});
      torch::manual_seed(1000);
      at::Tensor x = torch::randn({w * kMicroBatch, kBucketedLength}),
                 y = torch::randn({w * kMicroBatch, kBucketedLength});
      at::Tensor eps = torch::randn({w * kMicroBatch, kBucketedLatent});
      StepLoss(alone, x, y, eps).backward();
      auto mine = [&](const at::Tensor& t) { return t.narrow(0, r * kMicroBatch, kMicroBatch); };
      sync.PrepareBackward(true);
      StepLoss(parallel, mine(x), mine(y), mine(eps)).backward();
      sync.AverageGradients();

      std::vector<at::Tensor> grads;
      for (const auto& p : alone->parameters()) grads.push_back(p.grad().flatten());
      const double max_norm = fraction * at::cat(grads).norm().item<double>();
      const double theirs = torch::nn::utils::clip_grad_norm_(alone->parameters(), max_norm);
      const double ours = sync.ClipGradNorm(max_norm).item<double>();
      const std::string what = "bucket_mb=" + std::to_string(bucket_mb) + " fraction=" + std::to_string(fraction);
      EXPECT_TRUE(test::AllRanksAgree(std::abs(ours - theirs) <= 1e-5 * theirs))
          << what << ": " << ours << " vs " << theirs;
      double worst = 0, clipped_norm = 0;
      auto a = parallel->parameters(), b = alone->parameters();
      for (size_t i = 0; i < a.size(); ++i) {
        worst = std::max(worst, ((a[i].grad() - b[i].grad()).norm() / b[i].grad().norm()).item<double>());
        clipped_norm += a[i].grad().pow(2).sum().item<double>();
      }
      EXPECT_TRUE(test::AllRanksAgree(worst < 1e-5)) << what << ": gradients differ by " << worst;
      const double expected_norm = std::min(max_norm, ours);
      EXPECT_NEAR(std::sqrt(clipped_norm), expected_norm, 1e-5 * expected_norm) << what;
    }
  }
}

// Counts the all-reduces a GradientSync starts, and whether backward was still running.
class RecordingCommunicator : public MpiCommunicator {
 public:
  using MpiCommunicator::MpiCommunicator;
  std::unique_ptr<Work> AllReduceAverageAsync(at::Tensor tensor) override {
    ++started;
    if (in_backward) ++started_in_backward;
    return MpiCommunicator::AllReduceAverageAsync(tensor);
  }
  int started = 0;
  int started_in_backward = 0;
  bool in_backward = false;
};

TEST(BucketedSync, BucketsGoOutDuringBackwardAndOnlyOnTheLastMicroBatch) {
  for (bool overlap : {true, false}) {
    RecordingCommunicator comm(MPI_COMM_WORLD);
    torch::manual_seed(3);
    VaeMlp model(kBucketedLength, kBucketedHidden, kBucketedLatent);
    GradientSync sync(model->parameters(), comm, {4.0 / 1024, overlap});
    at::Tensor x = torch::randn({kMicroBatch, kBucketedLength}), eps = torch::randn({kMicroBatch, kBucketedLatent});
    for (int64_t micro = 0; micro < 3; ++micro) {
      sync.PrepareBackward(micro == 2);
      comm.in_backward = true;
      StepLoss(model, x, x, eps).backward();
      comm.in_backward = false;
      if (micro < 2) {
        EXPECT_EQ(comm.started, 0) << "communication before the last micro-batch";
      }
    }
    sync.AverageGradients();
    EXPECT_EQ(comm.started, sync.NumBuckets()) << "one all-reduce per bucket";
    if (overlap) {
      // Every bucket fills during backward, so every one starts before backward returns.
      EXPECT_EQ(comm.started_in_backward, sync.NumBuckets());
    } else {
      EXPECT_EQ(comm.started_in_backward, 0);
    }
  }
}

TEST(BucketedSync, UnusedParametersCountAsZeroAndDoNotStallTheBuckets) {
  MpiCommunicator comm(MPI_COMM_WORLD);
  torch::manual_seed(5);
  torch::nn::Linear used(8, 8), unused(8, 8);
  std::vector<at::Tensor> params = used->parameters();
  for (const auto& p : unused->parameters()) params.push_back(p);
  GradientSync sync(params, comm, {1e-4, true});  // a bucket per parameter
  sync.PrepareBackward(true);
  used(torch::ones({2, 8})).sum().backward();  // `unused` gets no gradient, so no hook fires
  sync.AverageGradients();
  bool ok = true;
  for (const auto& p : unused->parameters()) ok = ok && p.grad().defined() && p.grad().abs().sum().item<float>() == 0;
  for (const auto& p : used->parameters()) ok = ok && p.grad().abs().sum().item<float>() > 0;
  EXPECT_TRUE(test::AllRanksAgree(ok));
}

}  // namespace
}  // namespace ct
