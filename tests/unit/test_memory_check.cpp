// train/memory_check and model/model_size: a run that cannot fit is refused before allocating.
#include <c10/util/Exception.h>
#include <gtest/gtest.h>

#include <new>
#include <stdexcept>

#include "model/make_model.h"
#include "model/model_size.h"
#include "train/memory_check.h"
#include "util/error.h"

namespace ct {
namespace {

double BuiltParameters(const ModelConfig& c, const std::vector<int64_t>& dims) {
  double count = 0;
  for (const at::Tensor& p : MakeModel(c, {{"input", dims}, {"target", dims}})->Parameters())
    count += static_cast<double>(p.numel());
  return count;
}

// The estimate counts the very layers the built-in models build.
TEST(ModelSize, CountsTheBuiltInModelsParametersExactly) {
  ModelConfig mlp;
  mlp.kind = ModelKind::kVaeMlp;
  mlp.hidden = {48, 24};
  mlp.latent = 5;
  EXPECT_DOUBLE_EQ(EstimateModelSize(mlp, {100}, {100}).parameters, BuiltParameters(mlp, {100}));
  ModelConfig conv;
  conv.kind = ModelKind::kVaeConv1d;
  conv.channels = {4, 8};
  conv.kernel_size = 5;
  conv.stride = 2;
  conv.latent = 3;
  EXPECT_DOUBLE_EQ(EstimateModelSize(conv, {2, 64}, {2, 64}).parameters, BuiltParameters(conv, {2, 64}));
  EXPECT_DOUBLE_EQ(EstimateModelSize(conv, {65}, {65}).parameters, BuiltParameters(conv, {65}));
}

// bench step's GFLOP/s: the forward's multiply-adds, counted by hand for two small models.
TEST(ModelSize, CountsTheForwardsMultiplyAdds) {
  ModelConfig mlp;
  mlp.kind = ModelKind::kVaeMlp;
  mlp.hidden = {8};
  mlp.latent = 2;
  // 100x8, 8x(2x2), 2x8, 8x100.
  EXPECT_DOUBLE_EQ(EstimateModelSize(mlp, {100}, {100}).multiply_adds, 800 + 32 + 16 + 800);
  ModelConfig conv;
  conv.kind = ModelKind::kVaeConv1d;
  conv.channels = {4};
  conv.kernel_size = 3;
  conv.stride = 2;
  conv.latent = 2;
  // Length 65 -> 33. Conv1d(1, 4, 3): 4 x 33 outputs x 1 x 3; ConvTranspose1d(4, 1, 3): 4 x 33
  // inputs x 1 x 3; Linear(132, 4) and Linear(2, 132).
  EXPECT_DOUBLE_EQ(EstimateModelSize(conv, {65}, {65}).multiply_adds, 396 + 396 + 528 + 264);
}

TEST(MemoryCheck, FitsWhenEveryPartFits) {
  const MemoryNeed need = EstimateMemoryNeed({1000, 10}, 32, 8.0 * 256, 1 << 20);
  EXPECT_DOUBLE_EQ(need.batch_bytes, 32 * 8.0 * 256);
  EXPECT_DOUBLE_EQ(need.model_bytes, 16 * 1000.0);
  EXPECT_DOUBLE_EQ(need.activation_bytes, 4 * 32 * 10.0);
  EXPECT_EQ(MemoryShortfall(need, need.Total(), "memory", 32), "");
}

TEST(MemoryCheck, NamesTheSettingThatCannotFit) {
  const double gib = 1024.0 * 1024 * 1024;
  // A large batch of small rows: lower the batch.
  const std::string batch =
      MemoryShortfall(EstimateMemoryNeed({1e6, 1e3}, 1 << 20, 8e3, 0), 4 * gib, "memory", 1 << 20);
  EXPECT_NE(batch.find("one training step needs at least"), std::string::npos) << batch;
  EXPECT_NE(batch.find("but a rank has 4.0 GiB"), std::string::npos) << batch;
  EXPECT_NE(batch.find("lower train.batch_size (now 1048576)"), std::string::npos) << batch;
  // model.hidden=[1000000000]: the model alone.
  const std::string model = MemoryShortfall(EstimateMemoryNeed({2.6e11, 1e9}, 32, 2048, 0), 12 * gib, "memory", 32);
  EXPECT_NE(model.find("make the model smaller (model.hidden"), std::string::npos) << model;
  EXPECT_EQ(model.find("lower train.batch_size"), std::string::npos) << model;
  // Rows of 2^34 float32 (64 GiB input + 64 GiB target): no batch fits.
  const std::string rows = MemoryShortfall(EstimateMemoryNeed({100, 10}, 1, 128 * gib, 0), 12 * gib, "GPU memory", 1);
  EXPECT_NE(rows.find("a batch of 1 row 128.0 GiB"), std::string::npos) << rows;
  EXPECT_NE(rows.find("one row (input and target) is 128.0 GiB, so no batch fits"), std::string::npos) << rows;
  EXPECT_NE(rows.find("nodes with more GPU memory"), std::string::npos) << rows;
}

}  // namespace
}  // namespace ct

namespace ct {
namespace {

// An allocation that still fails is reported as running out of memory, with the settings to
// change and without LibTorch's place in its source.
// A c10::Error as LibTorch throws it (its constructors differ between 1.13 and 2.x).
c10::Error TorchError(const std::string& message) {
  try {
    TORCH_CHECK(false, message);
  } catch (const c10::Error& e) {
    return e;
  }
  throw std::logic_error("TORCH_CHECK(false) did not throw");
}

TEST(MemoryCheck, AnAllocatorFailureReadsAsOutOfMemory) {
  const c10::Error cpu = TorchError(
      "[enforce fail at alloc_cpu.cpp:75] data. DefaultCPUAllocator: can't allocate memory: you tried to allocate "
      "1099511627776 bytes. Error code 12 (Cannot allocate memory)");
  EXPECT_TRUE(IsOutOfMemory(cpu));
  const std::string text = ExceptionText(cpu);
  EXPECT_EQ(text.rfind("out of memory (data. DefaultCPUAllocator: can't allocate memory", 0), 0u) << text;
  EXPECT_EQ(text.find("alloc_cpu.cpp"), std::string::npos) << text;
  EXPECT_NE(text.find("lower train.batch_size"), std::string::npos) << text;
  EXPECT_TRUE(IsOutOfMemory(std::bad_alloc()));
  EXPECT_FALSE(IsOutOfMemory(TorchError("shape mismatch")));
}

}  // namespace
}  // namespace ct
