#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "train/metrics.h"
#include "util/launcher_env.h"

namespace ct {
namespace {

TEST(Metrics, JsonHasEveryFieldAndNoNaN) {
  EpochRecord r;
  r.epoch = 3;
  r.train_loss = 0.5;
  r.val_loss = std::nan("");
  const std::string json = ToJson(r);
  for (const char* field : {"epoch", "global_step", "train_loss", "train_mse", "train_kl", "val_loss", "val_mse",
                            "val_kl", "lr", "global_batch", "world_size", "samples_per_s", "train_seconds",
                            "val_seconds", "epoch_seconds", "data_seconds", "compute_seconds", "comm_seconds"}) {
    EXPECT_NE(json.find(std::string("\"") + field + "\":"), std::string::npos) << field;
  }
  EXPECT_NE(json.find("\"val_loss\":null"), std::string::npos) << json;
  EXPECT_NE(json.find("\"epoch\":3"), std::string::npos) << json;
  EXPECT_EQ(json.front(), '{');
  EXPECT_EQ(json.back(), '}');
}

TEST(Metrics, CsvRowsLineUpWithTheHeader) {
  EpochRecord r;
  r.epoch = 2;
  r.val_loss = std::nan("");
  const std::string header = CsvHeader(r), row = ToCsv(r);
  EXPECT_EQ(std::count(header.begin(), header.end(), ','), std::count(row.begin(), row.end(), ','));
  EXPECT_EQ(header.rfind("epoch,global_step,train_loss", 0), 0u) << header;
  EXPECT_EQ(row.rfind("2,0,", 0), 0u) << row;
  EXPECT_NE(row.find(",,"), std::string::npos) << "NaN should be an empty cell: " << row;
}

TEST(Metrics, GpuFieldsOnlyWhereMeasured) {
  EpochRecord cpu;
  EXPECT_EQ(ToJson(cpu).find("gpu_"), std::string::npos);
  EXPECT_EQ(CsvHeader(cpu).find("gpu_"), std::string::npos);
  EpochRecord gpu;
  gpu.gpu_mem_allocated_mb = 812.5;
  gpu.gpu_mem_reserved_mb = 1024;
  const std::string json = ToJson(gpu);
  EXPECT_NE(json.find("\"gpu_mem_allocated_mb\":812.5"), std::string::npos) << json;
  EXPECT_NE(json.find("\"gpu_mem_reserved_mb\":1024"), std::string::npos) << json;
  EXPECT_EQ(json.find("gpu_util_percent"), std::string::npos) << "no NVML: no utilisation field: " << json;
  const std::string header = CsvHeader(gpu), row = ToCsv(gpu);
  EXPECT_EQ(std::count(header.begin(), header.end(), ','), std::count(row.begin(), row.end(), ','));
}

TEST(LauncherEnv, SingletonsStartedByALauncherAreAnError) {
  EXPECT_EQ(SingletonError(1, std::nullopt), "");  // a plain single process
  EXPECT_EQ(SingletonError(1, 1), "");
  EXPECT_EQ(SingletonError(4, 4), "");
  const std::string message = SingletonError(1, 4);
  EXPECT_NE(message.find("started 4 processes"), std::string::npos) << message;
  EXPECT_NE(message.find("srun --mpi=pmix"), std::string::npos) << message;
}

}  // namespace
}  // namespace ct
