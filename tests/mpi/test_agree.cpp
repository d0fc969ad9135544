// RunAgreed: an error every rank (or some ranks) meet becomes one agreed error on every rank.
#include <gtest/gtest.h>

#include "cluster/agree.h"
#include "mpi/mpi_test_world.h"
#include "util/error.h"

namespace ct {
namespace {

// What RunAgreed threw on this rank ("" if nothing), with its code and agreed flag.
struct Outcome {
  std::string message;
  int code = kExitOk;
  bool agreed = false;
};

Outcome RunAndCatch(const std::function<void()>& body) {
  Outcome outcome;
  try {
    RunAgreed(test::World(), body);
  } catch (const Error& e) {
    outcome = {e.what(), e.ExitCode(), e.Agreed()};
  }
  return outcome;
}

TEST(RunAgreed, NothingThrownIsNothingThrown) {
  const Outcome outcome = RunAndCatch([] {});
  EXPECT_TRUE(test::AllRanksAgree(outcome.message.empty() && outcome.code == kExitOk));
}

TEST(RunAgreed, EveryRankGetsTheLowestFailingRanksError) {
  const int rank = test::World().Rank();
  const Outcome outcome = RunAndCatch([&] { throw DataError("bad rows on rank " + std::to_string(rank)); });
  EXPECT_TRUE(
      test::AllRanksAgree(outcome.message == "bad rows on rank 0" && outcome.code == kExitData && outcome.agreed))
      << outcome.message;
}

TEST(RunAgreed, AnErrorOnOneRankReachesAllWithItsRankAndCode) {
  const int last = test::World().Size() - 1;
  const Outcome outcome = RunAndCatch([&] {
    if (test::World().Rank() == last) throw ConfigError("no such checkpoint");
  });
  const std::string expected =
      last == 0 ? "no such checkpoint" : "no such checkpoint (found on rank " + std::to_string(last) + ")";
  EXPECT_TRUE(test::AllRanksAgree(outcome.message == expected && outcome.code == kExitUsage && outcome.agreed))
      << outcome.message;
}

}  // namespace
}  // namespace ct
