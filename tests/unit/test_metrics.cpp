#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "run/metrics.h"
#include "util/error.h"
#include "util/launcher_env.h"

namespace ct {
namespace {

TEST(Metrics, JsonHasEveryFieldAndNoNaN) {
  EpochRecord r;
  r.epoch = 3;
  r.train_loss = 0.5;
  r.val_loss = std::nan("");
  r.metric_names = {"mse", "kl"};
  r.train_metrics = {0.25, 2.0};
  r.val_metrics = {0.125, 3.0};
  const std::string json = ToJson(r);
  for (const char* field : {"epoch", "global_step", "train_loss", "train_mse", "train_kl", "val_loss", "val_mse",
                            "val_kl", "lr", "global_batch", "world_size", "samples_per_s", "train_seconds",
                            "val_seconds", "epoch_seconds", "data_seconds", "compute_seconds", "comm_seconds"}) {
    EXPECT_NE(json.find(std::string("\"") + field + "\":"), std::string::npos) << field;
  }
  EXPECT_NE(json.find("\"val_loss\":null"), std::string::npos) << json;
  EXPECT_NE(json.find("\"epoch\":3"), std::string::npos) << json;
  // Each metric after its split's loss, in the model's order.
  EXPECT_NE(json.find("\"train_loss\":0.5,\"train_mse\":0.25,\"train_kl\":2,\"val_loss\":null,\"val_mse\":0.125,"
                      "\"val_kl\":3,\"lr\""),
            std::string::npos)
      << json;
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

namespace ct {
namespace {

std::string MetricNamesError(const std::vector<std::string>& names) {
  try {
    CheckMetricNames(names, "model.path='pe.pt'");
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

TEST(Metrics, MetricNamesThatCannotBeRecordedAreRefused) {
  EXPECT_EQ(MetricNamesError({"mse", "kl", "mae_chirp_mass"}), "");
  EXPECT_NE(MetricNamesError({"loss"}).find("'loss' is the loss itself"), std::string::npos);
  EXPECT_NE(MetricNamesError({"mae", "mae"}).find("twice"), std::string::npos);
  EXPECT_NE(MetricNamesError({"mae/x"}).find("letters, digits and _"), std::string::npos);
  // train_seconds, val_seconds: fields of every record.
  const std::string seconds = MetricNamesError({"seconds"});
  EXPECT_NE(seconds.find("'train_seconds' collides"), std::string::npos) << seconds;
  EXPECT_NE(seconds.find("model.path='pe.pt'"), std::string::npos) << seconds;
  EXPECT_NE(MetricNamesError({"load_seconds"}).find("collides"), std::string::npos);
}

TEST(Metrics, MonitorNamesALossOrMetricOfEitherSplit) {
  const std::vector<std::string> names = {"mse", "kl"};
  EpochRecord r;
  r.train_loss = 1;
  r.val_loss = 2;
  r.metric_names = names;
  r.train_metrics = {3, 4};
  r.val_metrics = {5, 6};
  EXPECT_EQ(MonitoredValue(r, ParseMonitor("val/loss", names)), 2);
  EXPECT_EQ(MonitoredValue(r, ParseMonitor("train/loss", names)), 1);
  EXPECT_EQ(MonitoredValue(r, ParseMonitor("val/kl", names)), 6);
  EXPECT_EQ(MonitoredValue(r, ParseMonitor("train/mse", names)), 3);
  try {
    ParseMonitor("val/accuracy", names);
    ADD_FAILURE() << "val/accuracy names no metric";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("val/mse, train/mse, val/kl, train/kl"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace ct
