// util/startup_deadline: a rank stuck before the ranks first meet ends itself with a message.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "util/error.h"
#include "util/startup_deadline.h"

namespace ct {
namespace {

TEST(StartupDeadlineDeathTest, APassedDeadlineEndsTheProcessNamingThePhase) {
  EXPECT_EXIT(
      {
        StartStartupDeadline(0.2);
        StartupPhase("in MPI_Init");
        std::this_thread::sleep_for(std::chrono::seconds(30));
      },
      testing::ExitedWithCode(kExitComm), "start-up did not reach the ranks' first meeting within .*stuck in MPI_Init");
}

TEST(StartupDeadlineDeathTest, AnEndedDeadlineNeverFires) {
  EXPECT_EXIT(
      {
        StartStartupDeadline(0.2);
        EndStartupDeadline();
        std::this_thread::sleep_for(std::chrono::milliseconds(600));
        std::exit(0);
      },
      testing::ExitedWithCode(0), "");
}

}  // namespace
}  // namespace ct
