// util/unfinished_file: a stop signal removes the temporary being written, says so, and ends the
// process by that signal; nothing else is removed.
#include <gtest/gtest.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <string>

#include "util/unfinished_file.h"

namespace ct {
namespace {

namespace fs = std::filesystem;

// A fresh folder of this test's own, removed afterwards.
class UnfinishedFileDeathTest : public testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("ct-unfinished-" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string Touch(const std::string& name) const {
    const std::string path = (dir_ / name).string();
    std::ofstream(path) << "half written";
    return path;
  }
  fs::path dir_;
};

TEST_F(UnfinishedFileDeathTest, AStopSignalRemovesTheFileAndEndsByThatSignal) {
  const std::string tmp = Touch("out.h5.tmp");
  for (const int signal_number : {SIGTERM, SIGUSR1, SIGINT, SIGHUP}) {
    EXPECT_EXIT(
        {
          InstallStopSignalCleanup();
          const UnfinishedFile unfinished(tmp);
          std::raise(signal_number);
          std::_Exit(0);  // not reached
        },
        testing::KilledBySignal(signal_number), "stopped by SIG.*; removed the unfinished '" + tmp + "'");
    EXPECT_FALSE(fs::exists(tmp)) << "signal " << signal_number;
    Touch("out.h5.tmp");
  }
}

TEST_F(UnfinishedFileDeathTest, OnceTheFileIsDoneASignalRemovesNothing) {
  const std::string done = Touch("out.h5");
  EXPECT_EXIT(
      {
        InstallStopSignalCleanup();
        { const UnfinishedFile unfinished(done); }  // renamed into place: no longer unfinished
        std::raise(SIGTERM);
        std::_Exit(0);
      },
      testing::KilledBySignal(SIGTERM), "^$");
  EXPECT_TRUE(fs::exists(done));
}

TEST_F(UnfinishedFileDeathTest, AnInnerFileGivesWayToTheOuterOneWhenItEnds) {
  const std::string outer = Touch("outer.tmp");
  const std::string inner = Touch("inner.tmp");
  EXPECT_EXIT(
      {
        InstallStopSignalCleanup();
        const UnfinishedFile outer_file(outer);
        { const UnfinishedFile inner_file(inner); }
        std::raise(SIGTERM);
        std::_Exit(0);
      },
      testing::KilledBySignal(SIGTERM), "removed the unfinished '" + outer + "'");
  EXPECT_FALSE(fs::exists(outer));
  EXPECT_TRUE(fs::exists(inner));
}

TEST_F(UnfinishedFileDeathTest, ASignalIgnoredWhenTheProcessStartedStaysIgnored) {
  const std::string tmp = Touch("out.h5.tmp");
  EXPECT_EXIT(
      {
        std::signal(SIGINT, SIG_IGN);  // as a shell starts a background job
        InstallStopSignalCleanup();
        const UnfinishedFile unfinished(tmp);
        std::raise(SIGINT);
        std::_Exit(0);
      },
      testing::ExitedWithCode(0), "");
  EXPECT_TRUE(fs::exists(tmp));
}

}  // namespace
}  // namespace ct
