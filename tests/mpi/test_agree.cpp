// RunAgreed: an error every rank (or some ranks) meet becomes one agreed error on every rank.
#include <gtest/gtest.h>

#include "cluster/agree.h"
#include "mpi/mpi_test_world.h"
#include "util/error.h"

#include <c10/util/Exception.h>

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

TEST(RunAgreed, AnErrorEveryRankMeetsIsPrintedAsItIs) {
  const Outcome outcome = RunAndCatch([&] { throw DataError("no dataset 'input'"); });
  EXPECT_TRUE(
      test::AllRanksAgree(outcome.message == "no dataset 'input'" && outcome.code == kExitData && outcome.agreed))
      << outcome.message;
}

TEST(RunAgreed, DifferentErrorsAreListedWithTheirRanksAndHosts) {
  const int rank = test::World().Rank();
  const int size = test::World().Size();
  const Outcome outcome = RunAndCatch([&] {
    if (rank == 0) throw ConfigError("first problem");
    throw DataError("second problem");
  });
  const std::string host = test::World().Host();
  std::string expected = "first problem";
  if (size > 1) {
    expected += " (on rank 0 of " + std::to_string(size) + ", " + host + ")\n  second problem (on rank" +
                (size > 2 ? "s 1, 2" + std::string(size > 3 ? ", 3" : "") + " of " + std::to_string(size) + ": "
                          : " 1 of " + std::to_string(size) + ", ") +
                host + ")";
  }
  EXPECT_TRUE(test::AllRanksAgree(outcome.message == expected && outcome.code == kExitUsage && outcome.agreed))
      << outcome.message << "\nexpected: " << expected;
}

TEST(RunAgreed, AnErrorOnOneRankReachesAllWithItsRankHostAndCode) {
  const int last = test::World().Size() - 1;
  const Outcome outcome = RunAndCatch([&] {
    if (test::World().Rank() == last) throw ConfigError("no such checkpoint");
  });
  const std::string expected = last == 0 ? "no such checkpoint"
                                         : "no such checkpoint (on rank " + std::to_string(last) + " of " +
                                               std::to_string(last + 1) + ", " + test::World().Host() + ")";
  EXPECT_TRUE(test::AllRanksAgree(outcome.message == expected && outcome.code == kExitUsage && outcome.agreed))
      << outcome.message;
}

TEST(RunAgreed, LibTorchErrorsLoseTheirStackTrace) {
  const Outcome outcome = RunAndCatch([] { TORCH_CHECK(false, "shapes do not match"); });
  EXPECT_TRUE(test::AllRanksAgree(outcome.message == "shapes do not match" && outcome.code == kExitFailure))
      << outcome.message;
}

}  // namespace
}  // namespace ct
