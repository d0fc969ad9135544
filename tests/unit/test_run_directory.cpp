// output.dir's placeholders (one run directory per task of a Slurm job array), and what a fresh run
// accepts as its directory.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "error_of.h"
#include "run/run_directory.h"
#include "util/error.h"

namespace ct {
namespace {

std::string ExpandError(const std::string& dir) {
  return test::ErrorOf<ConfigError>([&] { ExpandRunDirectory(dir, 4); });
}

TEST(RunDirectory, PlaceholdersNameTheJobTheArrayTaskAndTheRankCount) {
  unsetenv("SLURM_ARRAY_JOB_ID");
  unsetenv("SLURM_ARRAY_TASK_ID");
  setenv("SLURM_JOB_ID", "130", 1);
  EXPECT_EQ(ExpandRunDirectory("runs/plain", 4), "runs/plain");
  EXPECT_EQ(ExpandRunDirectory("runs/j{job}-n{rank_count}", 4), "runs/j130-n4");
  EXPECT_NE(ExpandError("runs/{array_task}").find("uses {array_task}, but SLURM_ARRAY_TASK_ID is not set"),
            std::string::npos);
  // In an array, {job} is the array's id, shared by its tasks; SLURM_JOB_ID differs per task.
  setenv("SLURM_ARRAY_JOB_ID", "127", 1);
  setenv("SLURM_ARRAY_TASK_ID", "3", 1);
  EXPECT_EQ(ExpandRunDirectory("runs/sweep-{job}/task-{array_task}", 2), "runs/sweep-127/task-3");
  EXPECT_NE(ExpandError("runs/{task}").find("unknown placeholder {task}: the known ones are"), std::string::npos);
  unsetenv("SLURM_JOB_ID");
  unsetenv("SLURM_ARRAY_JOB_ID");
  unsetenv("SLURM_ARRAY_TASK_ID");
  EXPECT_NE(ExpandError("runs/{job}").find("SLURM_JOB_ID is not set"), std::string::npos);
}

// A fresh run never writes into a directory of other files: the user's own config.yaml there
// would be replaced by the run's. Such a directory is refused before anything is created in it;
// one that a run started in (run.lock, its config.yaml, logs, a temporary) is taken.
TEST(RunDirectory, AFreshRunRefusesADirectoryOfOtherFilesAndTouchesNothing) {
  namespace fs = std::filesystem;
  const fs::path root = fs::path(testing::TempDir()) / ("ct_rundir_" + std::to_string(getpid()));
  fs::remove_all(root);
  const auto write = [](const fs::path& file, const std::string& text) { std::ofstream(file) << text; };
  const auto fresh = [](const fs::path& dir) { return RunClaim{dir.string(), false, false, {}}; };

  fs::create_directories(root / "project");
  write(root / "project" / "config.yaml", "train:\n  epochs: 3  # mine\n");
  const std::string message = test::ErrorOf<ConfigError>([&] { RunDirectory claim(fresh(root / "project")); });
  EXPECT_NE(message.find("holds files that no clustertrain run wrote (config.yaml)"), std::string::npos) << message;
  EXPECT_FALSE(fs::exists(root / "project" / "run.lock"));
  EXPECT_FALSE(fs::exists(root / "logs"));
  std::ifstream kept(root / "project" / "config.yaml");
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(kept), {}), "train:\n  epochs: 3  # mine\n");

  fs::create_directories(root / "failed_start" / "logs");  // a run that stopped before its first epoch
  write(root / "failed_start" / "run.lock", "");
  write(root / "failed_start" / "config.yaml", "train: {}\n");
  write(root / "failed_start" / "best.pt.tmp", "");
  EXPECT_NO_THROW(RunDirectory claim(fresh(root / "failed_start")));

  fs::create_directories(root / "empty");
  EXPECT_NO_THROW(RunDirectory claim(fresh(root / "empty")));
  EXPECT_NO_THROW(RunDirectory claim(fresh(root / "new" / "run")));
  fs::remove_all(root);
}

}  // namespace
}  // namespace ct
