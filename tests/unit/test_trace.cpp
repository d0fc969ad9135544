// The timeline trace: what the recorder keeps, the JSON it writes, and what `clustertrain trace`
// reads back from it (the e2e test reads real runs' traces with an independent reader).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <thread>

#include "error_of.h"
#include "run/trace_report.h"
#include "util/atomic_file.h"
#include "util/config.h"
#include "util/error.h"
#include "util/trace.h"

namespace ct {
namespace {

using std::chrono::microseconds;

std::string TraceDir() {
  static int counter = 0;
  const std::string dir = testing::TempDir() + "ct_trace_" + std::to_string(getpid()) + "_" + std::to_string(counter++);
  std::filesystem::create_directories(dir + "/trace");
  return dir;
}

// A rank's recording of `steps` steps with spans of known lengths: "step" (1000 us) holding
// "forward" (100 us + 10 us x rank) and "backward" (300 us), and one bucket in flight (200 us).
trace::Recording FakeRank(int rank, int steps) {
  const trace::Clock::time_point zero = trace::Clock::now();
  trace::Start(zero);
  for (int s = 0; s < steps; ++s) {
    const auto t = zero + microseconds(2000 * s);
    trace::RecordSpan("forward", "compute", t, t + microseconds(100 + 10 * rank));
    trace::RecordSpan("backward", "compute", t + microseconds(200), t + microseconds(500));
    trace::RecordInterval("bucket in flight", "comm", 0, t + microseconds(300), t + microseconds(500),
                          {{{"bucket", 0}, {"bytes", 4096}}});
    trace::RecordSpan("step", "step", t, t + microseconds(1000), {{{"step", s + 1}}});
  }
  trace::Recording recording = trace::Stop();
  recording.thread_names[0] = "training";
  return recording;
}

void WriteRank(const std::string& dir, int rank, int world, int steps) {
  const std::string metadata = R"("rank":)" + std::to_string(rank) + R"(,"world_size":)" + std::to_string(world);
  WriteFileAtomically(dir + "/trace/rank-" + std::to_string(rank) + ".json",
                      trace::ToJson(FakeRank(rank, steps), rank, metadata));
}

const PhaseStats& Phase(const std::vector<PhaseStats>& phases, const std::string& name) {
  for (const PhaseStats& p : phases) {
    if (p.name == name) return p;
  }
  throw std::runtime_error("no phase " + name);
}

TEST(Trace, RecordsNothingWhenOff) {
  trace::Stop();
  {
    trace::Span span("forward", "compute");
    span.Set("step", 1);
  }
  trace::RecordCounter("bytes in flight", trace::Clock::now(), 5);
  trace::Start(trace::Clock::now());
  EXPECT_TRUE(trace::Stop().events.empty());
}

TEST(Trace, SpansOfEveryThreadWithTheirArguments) {
  trace::Start(trace::Clock::now());
  {
    trace::Span outer("step", "step");
    outer.Set("step", 7);
    { trace::Span inner("forward", "compute"); }
    std::thread([] {
      trace::NameThisThread("helper");
      trace::Span span("read", "data");
      span.Set("rows", 64);
    }).join();
  }
  const trace::Recording r = trace::Stop();
  ASSERT_EQ(r.events.size(), 3u);
  // Recorded as they end: the inner span first, its start inside the outer span.
  const trace::Event& inner = r.events[0];
  const trace::Event& read = r.events[1];
  const trace::Event& outer = r.events[2];
  EXPECT_STREQ(inner.name, "forward");
  EXPECT_STREQ(outer.name, "step");
  EXPECT_STREQ(outer.args[0].key, "step");
  EXPECT_EQ(outer.args[0].value, 7);
  EXPECT_GE(inner.start_ns, outer.start_ns);
  EXPECT_LE(inner.start_ns + inner.duration_ns, outer.start_ns + outer.duration_ns);
  EXPECT_NE(read.thread, outer.thread);
  EXPECT_EQ(r.thread_names[read.thread], "helper");
  EXPECT_EQ(read.args[0].value, 64);
}

// A device whose marks are 1 ms apart from 5 ms on: what the spans of the opening thread take.
class FakeDevice : public trace::DeviceTimeline {
 public:
  void Begin(trace::Clock::time_point) override { began = true; }
  int64_t Mark() override { return marks++; }
  std::vector<int64_t> Resolve() override {
    std::vector<int64_t> times;
    for (int64_t i = 0; i < marks; ++i) times.push_back(5000000 + 1000000 * i);
    return times;
  }
  std::string Describe() const override { return "fake device"; }
  bool began = false;
  int64_t marks = 0;
};

TEST(Trace, TheOpeningThreadsSpansAreTimedByTheDevice) {
  auto device = std::make_unique<FakeDevice>();
  FakeDevice* fake = device.get();
  trace::Start(trace::Clock::now(), std::move(device));
  EXPECT_TRUE(fake->began);
  {
    trace::Span step("step", "step");  // marks 0 and 3
    {
      trace::Span forward("forward", "compute");  // marks 1 and 2
    }
    trace::Span wait("stop check", "step", trace::Timing::kHost);  // the host's clock
    std::thread([] { trace::Span read("read", "data"); }).join();  // another thread: the host's
  }
  const trace::Recording r = trace::Stop();
  EXPECT_EQ(r.device_clock, "fake device");
  std::map<std::string, const trace::Event*> by_name;
  for (const trace::Event& e : r.events) by_name[e.name] = &e;
  ASSERT_EQ(by_name.size(), 4u);
  EXPECT_EQ(by_name["forward"]->start_ns, 6000000);
  EXPECT_EQ(by_name["forward"]->duration_ns, 1000000);
  EXPECT_EQ(by_name["step"]->start_ns, 5000000);
  EXPECT_EQ(by_name["step"]->duration_ns, 3000000);
  EXPECT_EQ(by_name["stop check"]->start_mark, -1);
  EXPECT_EQ(by_name["read"]->start_mark, -1);
  // The next window without a device: host times again.
  trace::Start(trace::Clock::now());
  { trace::Span forward("forward", "compute"); }
  EXPECT_EQ(trace::Stop().events.at(0).start_mark, -1);
}

TEST(Trace, JsonHasOneEventPerLineInTimeOrderWithMetadata) {
  const std::string json = trace::ToJson(FakeRank(1, 2), 1, R"("rank":1,"note":)" + trace::JsonQuoted("a \"b\"\n"));
  EXPECT_EQ(
      json.rfind(R"({"clustertrain_trace":1,"displayTimeUnit":"ms","otherData":{"rank":1,"note":"a \"b\"\u000a"})", 0),
      0u)
      << json;
  EXPECT_NE(json.find(R"({"ph":"M","name":"thread_name","pid":1,"tid":0,"args":{"name":"training"}})"),
            std::string::npos);
  // The step (recorded last) comes before the forward pass it holds, which starts with it.
  const size_t step = json.find(R"("name":"step","cat":"step","pid":1,"tid":0,"ts":0.000,"dur":1000.000,)");
  const size_t forward = json.find(R"("name":"forward","cat":"compute","pid":1,"tid":0,"ts":0.000,"dur":110.000,)");
  ASSERT_NE(step, std::string::npos) << json;
  ASSERT_NE(forward, std::string::npos) << json;
  EXPECT_LT(step, forward);
  // Async ids unique over ranks.
  EXPECT_NE(json.find(R"("ph":"b","name":"bucket in flight","cat":"comm","pid":1,"tid":0,"ts":300.000,"id":1000000,)"
                      R"("args":{"bucket":0,"bytes":4096}})"),
            std::string::npos)
      << json;
  EXPECT_EQ(json.substr(json.size() - 3), "]}\n");
}

TEST(Trace, SummaryGivesEachPhaseOverStepsAndRanksWithTheSlowestRank) {
  const std::string dir = TraceDir();
  for (int rank = 0; rank < 3; ++rank) WriteRank(dir, rank, 3, 4);
  const std::vector<PhaseStats> phases = SummarizeTraces(dir);
  ASSERT_EQ(phases.size(), 4u);
  EXPECT_EQ(phases[0].name, "step");  // the order of first appearance
  const PhaseStats& forward = Phase(phases, "forward");
  EXPECT_EQ(forward.count, 12);
  EXPECT_NEAR(forward.mean_ms, 0.110, 1e-9);  // ranks at 100, 110 and 120 us
  EXPECT_NEAR(forward.p50_ms, 0.110, 1e-9);
  EXPECT_NEAR(forward.p99_ms, 0.120, 1e-9);
  EXPECT_EQ(forward.slowest_rank, 2);
  EXPECT_NEAR(forward.slowest_rank_mean_ms, 0.120, 1e-9);
  EXPECT_NEAR(Phase(phases, "bucket in flight").mean_ms, 0.200, 1e-9);
  EXPECT_EQ(Phase(phases, "bucket in flight").count, 12);
  EXPECT_NEAR(Phase(phases, "step").max_ms, 1.0, 1e-9);
  EXPECT_NE(
      SummaryTable(phases).find("forward                 12      0.110      0.110      0.120      0.120     2 (0.120)"),
      std::string::npos)
      << SummaryTable(phases);
  EXPECT_NE(SummaryJson(phases).find(R"({"phase":"forward","spans":12,"mean_ms":0.110000,)"), std::string::npos);
}

TEST(Trace, MergeKeepsEveryRanksEventsAsItsOwnProcess) {
  const std::string dir = TraceDir();
  WriteRank(dir, 0, 2, 3);
  WriteRank(dir, 1, 2, 3);
  const std::string merged = MergeTraces(dir);
  EXPECT_EQ(merged, dir + "/trace/merged.json");
  std::ifstream in(merged);
  std::string header;
  std::getline(in, header);
  EXPECT_NE(header.find(R"("otherData":{"ranks":[{"rank":0,"world_size":2},{"rank":1,"world_size":2}]})"),
            std::string::npos)
      << header;
  int per_rank[2] = {0, 0};
  for (std::string line; std::getline(in, line);) {
    if (line.find("\"pid\":0,") != std::string::npos) ++per_rank[0];
    if (line.find("\"pid\":1,") != std::string::npos) ++per_rank[1];
  }
  // 3 metadata events (process name, sort index, thread), 3 steps of 5 events.
  EXPECT_EQ(per_rank[0], 18);
  EXPECT_EQ(per_rank[1], 18);
}

TEST(Trace, ReadingRefusesMissingRanksAndFilesItDidNotWrite) {
  EXPECT_NE(test::ErrorOf([] { SummarizeTraces(testing::TempDir() + "no-such-run"); }).find("output.trace.steps"),
            std::string::npos);
  const std::string dir = TraceDir();
  WriteRank(dir, 0, 2, 1);
  EXPECT_NE(test::ErrorOf([&] { SummarizeTraces(dir); }).find("lacks rank-1.json (the run had 2 ranks)"),
            std::string::npos);
  WriteFileAtomically(dir + "/trace/rank-1.json", "{\"traceEvents\":[]}\n");
  EXPECT_NE(test::ErrorOf([&] { MergeTraces(dir); }).find("rank-1.json was not written by clustertrain"),
            std::string::npos);
  std::string cut = trace::ToJson(FakeRank(1, 2), 1, R"("rank":1,"world_size":2)");
  WriteFileAtomically(dir + "/trace/rank-1.json", cut.substr(0, cut.size() / 2));
  EXPECT_NE(test::ErrorOf([&] { MergeTraces(dir); }).find("(it ends early)"), std::string::npos);
}

TEST(Trace, StepsKeyTakesAWindowAndNamesWhatIsWrong) {
  EXPECT_TRUE(LoadConfigText("output: {dir: x}\n", "t", {}).output.trace_steps.empty());
  EXPECT_EQ(LoadConfigText("output: {trace: {steps: [10, 12]}}\n", "t", {}).output.trace_steps,
            (std::vector<int64_t>{10, 12}));
  const Config c = LoadConfigText("", "t", {"output.trace.steps=[3, 3]"});
  EXPECT_EQ(LoadConfigText(ConfigToYaml(c), "t", {}).output.trace_steps, (std::vector<int64_t>{3, 3}));
  EXPECT_NE(ConfigToYaml(Config{}).find("  trace:\n    steps: ~\n"), std::string::npos);
  EXPECT_TRUE(LoadConfigText(ConfigToYaml(Config{}), "t", {}).output.trace_steps.empty());  // null when off
  auto error = [](const std::string& value) {
    return test::ErrorOf([&] { LoadConfigText("", "t", {"output.trace.steps=" + value}); });
  };
  EXPECT_NE(error("[5]").find("expected a list [first, last] of two step numbers such as [100, 110], got [5]"),
            std::string::npos)
      << error("[5]");
  EXPECT_NE(error("[0, 3]").find("needs 1 <= first <= last (global steps count from 1), got [0, 3]"),
            std::string::npos);
  EXPECT_NE(error("[5, 3]").find("needs 1 <= first <= last"), std::string::npos);
  EXPECT_TRUE(error("[1, 10000]").empty());
  EXPECT_NE(error("[1, 10001]").find("traces at most 10000 steps"), std::string::npos);
  EXPECT_NE(error("[1, x]").find("config key 'output.trace.steps'"), std::string::npos);
}

}  // namespace
}  // namespace ct
