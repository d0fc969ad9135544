#include "run/trace_report.h"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>

#include "util/atomic_file.h"
#include "util/error.h"
#include "util/trace.h"

namespace ct {
namespace {

constexpr const char* kHeaderStart = "{\"clustertrain_trace\":1,";
constexpr const char* kEventsStart = ",\"traceEvents\":[";

// One rank's file: its otherData (JSON text) and its event lines.
struct RankTrace {
  int rank = 0;
  std::string path;
  std::string other_data;
  std::vector<std::string> events;
};

RankTrace ReadRankTrace(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw DataError("cannot read the trace file " + path);
  const std::string not_ours = "the trace file " + path +
                               " was not written by clustertrain's output.trace (or was changed since); "
                               "rerun the traced steps to write it again";
  std::string header;
  std::getline(in, header);
  const size_t data = header.find("\"otherData\":");
  const size_t events = header.rfind(kEventsStart);
  if (header.rfind(kHeaderStart, 0) != 0 || data == std::string::npos || events == std::string::npos ||
      events + std::string(kEventsStart).size() != header.size()) {
    throw DataError(not_ours);
  }
  RankTrace trace;
  trace.path = path;
  trace.other_data = header.substr(data + 12, events - data - 12);
  bool ended = false;
  for (std::string line; std::getline(in, line);) {
    if (line == "]}") {
      ended = true;
      break;
    }
    if (!line.empty() && line.back() == ',') line.pop_back();
    trace.events.push_back(line);
  }
  if (!ended) throw DataError(not_ours + " (it ends early)");
  try {
    trace.rank = YAML::Load(trace.other_data)["rank"].as<int>();
  } catch (const YAML::Exception&) {
    throw DataError(not_ours);
  }
  return trace;
}

// Every rank's file, in rank order; all ranks of the traced run must be there.
std::vector<RankTrace> ReadRunTraces(const std::string& run_dir) {
  const std::string dir = run_dir + "/trace";
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) {
    throw DataError("no trace in " + run_dir + ": " + dir +
                    " does not exist; train with output.trace.steps set (e.g. --set 'output.trace.steps=[10, 20]')");
  }
  std::map<int, RankTrace> by_rank;
  const std::regex rank_file(R"(rank-(\d+)\.json)");
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    std::smatch m;
    const std::string name = entry.path().filename().string();
    if (!std::regex_match(name, m, rank_file)) continue;
    RankTrace trace = ReadRankTrace(entry.path().string());
    if (trace.rank != std::stoi(m[1]))
      throw DataError("the trace file " + trace.path + " holds rank " + std::to_string(trace.rank));
    by_rank.emplace(trace.rank, std::move(trace));
  }
  if (by_rank.empty()) throw DataError("no trace in " + dir + ": no rank-<r>.json files");
  const int world = YAML::Load(by_rank.begin()->second.other_data)["world_size"].as<int>();
  std::vector<RankTrace> out;
  for (int r = 0; r < world; ++r) {
    auto it = by_rank.find(r);
    if (it == by_rank.end()) {
      throw DataError("the trace in " + dir + " lacks rank-" + std::to_string(r) + ".json (the run had " +
                      std::to_string(world) + " ranks): that rank failed to write it (see its log), or it was removed");
    }
    out.push_back(std::move(it->second));
  }
  return out;
}

// The value of `key` in one of our event lines (flat members; names without quotes or commas in
// them): a string without its quotes, or a number's text. A line is parsed in microseconds, where
// a YAML parser takes a thousand times longer (a trace of a few thousand steps on many ranks).
std::string FieldOf(const std::string& line, const std::string& key) {
  const std::string marker = "\"" + key + "\":";
  const size_t at = line.find(marker);
  if (at == std::string::npos) return "";
  size_t begin = at + marker.size();
  if (line[begin] == '"') {
    ++begin;
    return line.substr(begin, line.find('"', begin) - begin);
  }
  return line.substr(begin, line.find_first_of(",}", begin) - begin);
}

double NumberOf(const std::string& line, const std::string& key, const std::string& path) {
  const std::string text = FieldOf(line, key);
  try {
    return std::stod(text);
  } catch (const std::exception&) {
    throw DataError("the trace file " + path + " has an event without a number '" + key + "': " + line);
  }
}

// Nearest-rank percentile of sorted values.
double Percentile(const std::vector<double>& sorted, double p) {
  const auto index = static_cast<size_t>(std::ceil(p / 100.0 * static_cast<double>(sorted.size())));
  return sorted[std::min(sorted.size(), std::max<size_t>(index, 1)) - 1];
}

struct PhaseSamples {
  std::vector<double> all_ms;
  std::map<int, std::vector<double>> by_rank;
};

// The durations of one rank's spans and async intervals by name, in the order names appear.
void CollectDurations(const RankTrace& trace, std::vector<std::string>& order,
                      std::map<std::string, PhaseSamples>& phases) {
  std::map<int64_t, double> begun;  // async id -> start (us)
  auto add = [&](const std::string& name, double ms) {
    if (!phases.count(name)) order.push_back(name);
    phases[name].all_ms.push_back(ms);
    phases[name].by_rank[trace.rank].push_back(ms);
  };
  for (const std::string& line : trace.events) {
    const std::string phase = FieldOf(line, "ph");
    if (phase == "X") {
      add(FieldOf(line, "name"), NumberOf(line, "dur", trace.path) / 1e3);
    } else if (phase == "b") {
      begun[static_cast<int64_t>(NumberOf(line, "id", trace.path))] = NumberOf(line, "ts", trace.path);
    } else if (phase == "e") {
      const auto it = begun.find(static_cast<int64_t>(NumberOf(line, "id", trace.path)));
      if (it == begun.end()) continue;
      add(FieldOf(line, "name"), (NumberOf(line, "ts", trace.path) - it->second) / 1e3);
      begun.erase(it);
    }
  }
}

}  // namespace

std::string MergeTraces(const std::string& run_dir, const std::string& output) {
  const std::vector<RankTrace> traces = ReadRunTraces(run_dir);
  std::string ranks;
  size_t count = 0;
  for (const RankTrace& t : traces) {
    ranks += (ranks.empty() ? "" : ",") + t.other_data;
    count += t.events.size();
  }
  std::string out = std::string(kHeaderStart) + "\"displayTimeUnit\":\"ms\",\"otherData\":{\"ranks\":[" + ranks + "]}" +
                    kEventsStart + "\n";
  size_t written = 0;
  for (const RankTrace& t : traces) {
    for (const std::string& line : t.events) out += line + (++written < count ? ",\n" : "\n");
  }
  out += "]}\n";
  const std::string path = output.empty() ? run_dir + "/trace/merged.json" : output;
  WriteFileAtomically(path, out);
  return path;
}

std::vector<PhaseStats> SummarizeTraces(const std::string& run_dir) {
  std::vector<std::string> order;
  std::map<std::string, PhaseSamples> phases;
  for (const RankTrace& t : ReadRunTraces(run_dir)) CollectDurations(t, order, phases);
  std::vector<PhaseStats> out;
  for (const std::string& name : order) {
    PhaseSamples& s = phases[name];
    std::sort(s.all_ms.begin(), s.all_ms.end());
    PhaseStats stats;
    stats.name = name;
    stats.count = static_cast<int64_t>(s.all_ms.size());
    double sum = 0;
    for (double v : s.all_ms) sum += v;
    stats.mean_ms = sum / static_cast<double>(stats.count);
    stats.p50_ms = Percentile(s.all_ms, 50);
    stats.p99_ms = Percentile(s.all_ms, 99);
    stats.max_ms = s.all_ms.back();
    stats.slowest_rank_mean_ms = -1;
    for (const auto& [rank, values] : s.by_rank) {
      double rank_sum = 0;
      for (double v : values) rank_sum += v;
      const double mean = rank_sum / static_cast<double>(values.size());
      if (mean > stats.slowest_rank_mean_ms) {
        stats.slowest_rank = rank;
        stats.slowest_rank_mean_ms = mean;
      }
    }
    out.push_back(stats);
  }
  return out;
}

std::string SummaryTable(const std::vector<PhaseStats>& phases) {
  std::string out = fmt::format("{:<18} {:>7} {:>10} {:>10} {:>10} {:>10} {:>14}\n", "phase", "spans", "mean ms",
                                "p50 ms", "p99 ms", "max ms", "slowest rank");
  for (const PhaseStats& p : phases) {
    out += fmt::format("{:<18} {:>7} {:>10.3f} {:>10.3f} {:>10.3f} {:>10.3f} {:>5} ({:.3f})\n", p.name, p.count,
                       p.mean_ms, p.p50_ms, p.p99_ms, p.max_ms, p.slowest_rank, p.slowest_rank_mean_ms);
  }
  return out;
}

std::string SummaryJson(const std::vector<PhaseStats>& phases) {
  std::string out;
  for (const PhaseStats& p : phases) {
    out += fmt::format(R"({}{{"phase":{},"spans":{},"mean_ms":{:.6f},"p50_ms":{:.6f},"p99_ms":{:.6f},"max_ms":{:.6f},)"
                       R"("slowest_rank":{},"slowest_rank_mean_ms":{:.6f}}})",
                       out.empty() ? "" : ",\n ", trace::JsonQuoted(p.name), p.count, p.mean_ms, p.p50_ms, p.p99_ms,
                       p.max_ms, p.slowest_rank, p.slowest_rank_mean_ms);
  }
  return "[" + out + "]\n";
}

}  // namespace ct
