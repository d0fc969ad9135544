// Start-up lines that differ between ranks: one line when all agree, else each distinct line
// once with its ranks and hosts (the split Adam's fallback on one node of many).
#include <gtest/gtest.h>

#include "cluster/rank_lines.h"

namespace ct {
namespace {

TEST(RankLines, RangesJoinConsecutiveRanks) {
  EXPECT_EQ(RankRanges({0}), "0");
  EXPECT_EQ(RankRanges({0, 1, 2, 3, 5, 7, 8}), "0-3,5,7-8");
}

TEST(RankLines, OneLineWhenEveryRankAgrees) {
  EXPECT_EQ(LinesByRanks({"Adam in shared memory", "Adam in shared memory"}, {"a", "b"}),
            std::vector<std::string>{"Adam in shared memory"});
  EXPECT_TRUE(LinesByRanks({}, {}).empty());
}

TEST(RankLines, EachDistinctLineOnceWithItsRanksAndHosts) {
  const std::vector<std::string> lines = {"shared", "shared", "gathered: /dev/shm full", "gathered: /dev/shm full",
                                          "shared", "shared"};
  const std::vector<std::string> hosts = {"node-a", "node-a", "node-b", "node-b", "node-c", "node-c"};
  EXPECT_EQ(LinesByRanks(lines, hosts), (std::vector<std::string>{"ranks 0-1,4-5 (node-a, node-c): shared",
                                                                  "ranks 2-3 (node-b): gathered: /dev/shm full"}));
  EXPECT_EQ(LinesByRanks({"x", "y"}, {"h", "h"}), (std::vector<std::string>{"rank 0 (h): x", "rank 1 (h): y"}));
}

TEST(RankLines, RanksWithNothingToSayAreLeftOut) {
  EXPECT_TRUE(LinesByRanks({"", "", ""}, {"a", "a", "b"}).empty());
  EXPECT_EQ(LinesByRanks({"", "", "MKL takes its generic path on this AMD CPU"}, {"intel", "intel", "amd"}),
            std::vector<std::string>{"rank 2 (amd): MKL takes its generic path on this AMD CPU"});
}

TEST(RankLines, NamesAtMostFourHostsOfALine) {
  std::vector<std::string> lines(7, "slow");
  lines[0] = "fast";
  const std::vector<std::string> hosts = {"n0", "n1", "n2", "n3", "n4", "n5", "n6"};
  EXPECT_EQ(LinesByRanks(lines, hosts)[1], "ranks 1-6 (n1, n2, n3, n4 and 2 more): slow");
}

}  // namespace
}  // namespace ct
