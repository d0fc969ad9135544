// output.dir's placeholders: one run directory per task of a Slurm job array.
#include <gtest/gtest.h>

#include <cstdlib>

#include "error_of.h"
#include "run/run_directory.h"
#include "util/error.h"

namespace ct {
namespace {

std::string ErrorOf(const std::string& dir) {
  return test::ErrorOf<ConfigError>([&] { ExpandRunDirectory(dir, 4); });
}

TEST(RunDirectory, PlaceholdersNameTheJobTheArrayTaskAndTheRankCount) {
  unsetenv("SLURM_ARRAY_JOB_ID");
  unsetenv("SLURM_ARRAY_TASK_ID");
  setenv("SLURM_JOB_ID", "130", 1);
  EXPECT_EQ(ExpandRunDirectory("runs/plain", 4), "runs/plain");
  EXPECT_EQ(ExpandRunDirectory("runs/j{job}-n{rank_count}", 4), "runs/j130-n4");
  EXPECT_NE(ErrorOf("runs/{array_task}").find("uses {array_task}, but SLURM_ARRAY_TASK_ID is not set"),
            std::string::npos);
  // In an array, {job} is the array's id, shared by its tasks; SLURM_JOB_ID differs per task.
  setenv("SLURM_ARRAY_JOB_ID", "127", 1);
  setenv("SLURM_ARRAY_TASK_ID", "3", 1);
  EXPECT_EQ(ExpandRunDirectory("runs/sweep-{job}/task-{array_task}", 2), "runs/sweep-127/task-3");
  EXPECT_NE(ErrorOf("runs/{task}").find("unknown placeholder {task}: the known ones are"), std::string::npos);
  unsetenv("SLURM_JOB_ID");
  unsetenv("SLURM_ARRAY_JOB_ID");
  unsetenv("SLURM_ARRAY_TASK_ID");
  EXPECT_NE(ErrorOf("runs/{job}").find("SLURM_JOB_ID is not set"), std::string::npos);
}

}  // namespace
}  // namespace ct
