// GradientSync's hooks may be called from several threads at once (the autograd engine runs a
// thread per device, and reentrant backward): every bucket must still be launched exactly once,
// in index order, as on one thread.
#include <gtest/gtest.h>
#include <torch/csrc/autograd/function.h>
#include <torch/csrc/autograd/variable.h>

#include <algorithm>
#include <chrono>
#include <mutex>
#include <random>
#include <thread>

#include "comm/gradient_sync.h"

namespace ct {
namespace {

class DoneWork : public Work {
 public:
  void Wait() override {}
};

// Records the buckets handed to it, in order; reduces nothing (one rank).
class RecordingCommunicator : public Communicator {
 public:
  std::string Name() const override { return "recording"; }
  int Rank() const override { return 0; }
  int Size() const override { return 1; }
  void AllReduceSum(at::Tensor&) override {}
  void AllReduceAverage(at::Tensor&) override {}
  std::unique_ptr<Work> AllReduceAverageAsync(at::Tensor tensor) override {
    // A launch takes a while (an MPI hand-off, a stream wait): a hook on another thread that
    // launched the next bucket meanwhile would be recorded, and issued, first.
    std::this_thread::sleep_for(std::chrono::microseconds(50));
    std::lock_guard<std::mutex> lock(mutex_);
    launched.push_back(tensor.data_ptr());
    return std::make_unique<DoneWork>();
  }
  void Broadcast(at::Tensor&, int) override {}
  at::Tensor AllGather(const at::Tensor& tensor) override { return tensor.unsqueeze(0); }
  void Barrier() override {}
  std::vector<const void*> launched;

 private:
  std::mutex mutex_;
};

TEST(GradientHooks, ConcurrentHooksLaunchEveryBucketOnceInOrder) {
  constexpr int kParams = 64, kThreads = 8, kRounds = 30;
  std::vector<at::Tensor> params;
  for (int i = 0; i < kParams; ++i) params.push_back(at::randn({16}).requires_grad_(true));
  RecordingCommunicator comm;
  // 16 floats = 64 bytes a parameter; buckets of 128 bytes: two parameters each, 32 buckets.
  GradientSync sync(params, comm, {128.0 / (1024 * 1024), /*overlap=*/true});
  ASSERT_EQ(sync.NumBuckets(), kParams / 2);
  std::vector<const void*> expected;
  for (const GradientBucket& bucket : sync.Buckets()) expected.push_back(bucket.grads.data_ptr());

  std::mt19937 shuffle(5);
  for (int round = 0; round < kRounds; ++round) {
    comm.launched.clear();
    sync.PrepareBackward(/*communicate=*/true);
    // Every parameter's hooks run twice (a gradient accumulated twice), from different threads.
    std::vector<int> order;
    for (int i = 0; i < 2 * kParams; ++i) order.push_back(i % kParams);
    std::shuffle(order.begin(), order.end(), shuffle);
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&, t] {
        for (size_t k = t; k < order.size(); k += kThreads) {
          const at::Tensor& p = params[order[k]];
          auto accumulator = torch::autograd::impl::grad_accumulator(p);
          for (auto& hook : accumulator->post_hooks()) (*hook)({p.grad()}, {});
        }
      });
    }
    for (std::thread& thread : threads) thread.join();
    ASSERT_EQ(comm.launched, expected) << "round " << round << ": buckets launched " << comm.launched.size()
                                       << " times for " << expected.size() << " buckets, or out of order";
    sync.AverageGradients();  // every bucket already out: nothing more is launched
    ASSERT_EQ(comm.launched.size(), expected.size());
  }
}

}  // namespace
}  // namespace ct
