#include "cluster/rank_lines.h"

#include <algorithm>

#include "cluster/gather_strings.h"
#include "util/logging.h"

namespace ct {
namespace {

constexpr size_t kHostsNamed = 4;

// "node-a, node-b" for the distinct hosts of `ranks`, the first kHostsNamed of them.
std::string HostsOf(const std::vector<int>& ranks, const std::vector<std::string>& hosts) {
  std::vector<std::string> seen;
  for (int r : ranks) {
    const std::string& host = hosts[static_cast<size_t>(r)];
    if (std::find(seen.begin(), seen.end(), host) == seen.end()) seen.push_back(host);
  }
  std::string text;
  for (size_t i = 0; i < seen.size() && i < kHostsNamed; ++i) text += (i ? ", " : "") + seen[i];
  if (seen.size() > kHostsNamed) text += " and " + std::to_string(seen.size() - kHostsNamed) + " more";
  return text;
}

}  // namespace

std::string RankRanges(const std::vector<int>& ranks) {
  std::string text;
  for (size_t i = 0; i < ranks.size();) {
    size_t j = i;
    while (j + 1 < ranks.size() && ranks[j + 1] == ranks[j] + 1) ++j;
    text += (text.empty() ? "" : ",") + std::to_string(ranks[i]) + (j > i ? "-" + std::to_string(ranks[j]) : "");
    i = j + 1;
  }
  return text;
}

std::vector<std::string> LinesByRanks(const std::vector<std::string>& lines, const std::vector<std::string>& hosts) {
  std::vector<std::string> distinct;  // in the order of each line's first rank
  std::vector<std::vector<int>> ranks_of;
  for (int r = 0; r < static_cast<int>(lines.size()); ++r) {
    if (lines[static_cast<size_t>(r)].empty()) continue;
    const auto at = std::find(distinct.begin(), distinct.end(), lines[static_cast<size_t>(r)]);
    if (at == distinct.end()) {
      distinct.push_back(lines[static_cast<size_t>(r)]);
      ranks_of.push_back({r});
    } else {
      ranks_of[static_cast<size_t>(at - distinct.begin())].push_back(r);
    }
  }
  if (distinct.size() == 1 && ranks_of[0].size() == lines.size()) return distinct;  // every rank agrees
  std::vector<std::string> out;
  for (size_t i = 0; i < distinct.size(); ++i) {
    const std::vector<int>& ranks = ranks_of[i];
    out.push_back(std::string(ranks.size() > 1 ? "ranks " : "rank ") + RankRanges(ranks) + " (" +
                  HostsOf(ranks, hosts) + "): " + distinct[i]);
  }
  return out;
}

void LogLinePerRanks(const MpiWorld& world, const std::string& line, LineLevel level) {
  // One gather of "host\nline": the host names carry no newline.
  const std::vector<std::string> records = GatherStrings(world.Comm(), world.Host() + "\n" + line, 0);
  if (world.Rank() != 0) return;
  std::vector<std::string> hosts;
  std::vector<std::string> lines;
  for (const std::string& record : records) {
    const size_t cut = record.find('\n');
    hosts.push_back(record.substr(0, cut));
    lines.push_back(record.substr(cut + 1));
  }
  for (const std::string& text : LinesByRanks(lines, hosts)) {
    spdlog::log(level == LineLevel::kWarning ? spdlog::level::warn : spdlog::level::info, "{}", text);
  }
}

}  // namespace ct
