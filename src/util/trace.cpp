#include "util/trace.h"

#include <fmt/format.h>

#include <algorithm>
#include <mutex>

namespace ct::trace {

namespace detail {
std::atomic<bool> recording{false};
}

namespace {

// The recorder's state; the mutex guards all of it.
struct Recorder {
  std::mutex mutex;
  std::vector<Event> events;
  std::vector<std::string> thread_names;
  Clock::time_point zero;
  std::unique_ptr<DeviceTimeline> device;  // used by the device thread alone, outside the mutex
};

Recorder& TheRecorder() {
  static Recorder recorder;
  return recorder;
}

thread_local int this_thread = -1;
thread_local bool device_thread = false;  // the thread whose spans the device times

// The calling thread's number, registered on first use (with the recorder's mutex held).
int ThreadNumber(Recorder& r) {
  if (this_thread < 0) {
    this_thread = static_cast<int>(r.thread_names.size());
    r.thread_names.push_back("thread " + std::to_string(this_thread));
  }
  return this_thread;
}

int64_t Since(const Recorder& r, Clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(t - r.zero).count();
}

void Append(Event event, Clock::time_point start) {
  Recorder& r = TheRecorder();
  std::lock_guard<std::mutex> lock(r.mutex);
  if (!On()) return;  // the window closed meanwhile
  event.thread = ThreadNumber(r);
  event.start_ns = Since(r, start);
  r.events.push_back(event);
}

}  // namespace

std::string JsonQuoted(const std::string& text) {
  std::string out = "\"";
  for (const char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      out += fmt::format("\\u{:04x}", static_cast<int>(c));
    } else {
      out += c;
    }
  }
  return out + "\"";
}

namespace {

std::string Microseconds(int64_t ns) { return fmt::format("{:.3f}", static_cast<double>(ns) / 1e3); }

std::string ArgsJson(const Args& args) {
  std::string out;
  for (const Arg& arg : args) {
    if (!arg.key) continue;
    out += fmt::format("{}\"{}\":{}", out.empty() ? "" : ",", arg.key, arg.value);
  }
  return "{" + out + "}";
}

std::string EventJson(const Event& e, int rank) {
  std::string out = fmt::format(R"({{"ph":"{}","name":"{}","cat":"{}","pid":{},"tid":{},"ts":{})", e.phase, e.name,
                                e.category, rank, e.thread, Microseconds(e.start_ns));
  if (e.phase == 'X') out += ",\"dur\":" + Microseconds(e.duration_ns);
  // Async ids are global in the format: unique per rank, so that a merged file keeps them apart.
  if (e.phase == 'b' || e.phase == 'e') out += fmt::format(",\"id\":{}", int64_t{rank} * 1000000 + e.id);
  return out + ",\"args\":" + ArgsJson(e.args) + "}";
}

}  // namespace

void Start(Clock::time_point zero, std::unique_ptr<DeviceTimeline> device) {
  Recorder& r = TheRecorder();
  if (device) device->Begin(zero);
  std::lock_guard<std::mutex> lock(r.mutex);
  r.events.clear();
  r.zero = zero;
  r.device = std::move(device);
  device_thread = r.device != nullptr;
  detail::recording.store(true, std::memory_order_relaxed);
}

Recording Stop() {
  Recorder& r = TheRecorder();
  std::unique_ptr<DeviceTimeline> device;
  Recording out;
  {
    std::lock_guard<std::mutex> lock(r.mutex);
    detail::recording.store(false, std::memory_order_relaxed);
    out = Recording{std::move(r.events), r.thread_names, r.zero, ""};
    r.events.clear();
    device = std::move(r.device);
  }
  device_thread = false;
  if (!device) return out;
  // The device spans' times, now that the window is over (a synchronisation).
  out.device_clock = device->Describe();
  const std::vector<int64_t> times = device->Resolve();
  for (Event& e : out.events) {
    if (e.start_mark < 0) continue;
    e.start_ns = times[e.start_mark];
    e.duration_ns = times[e.end_mark] - times[e.start_mark];
  }
  return out;
}

void NameThisThread(const std::string& name) {
  Recorder& r = TheRecorder();
  std::lock_guard<std::mutex> lock(r.mutex);
  r.thread_names[ThreadNumber(r)] = name;
}

void Span::Set(const char* key, int64_t value) {
  if (!name_) return;
  for (Arg& arg : args_) {
    if (!arg.key || arg.key == key) {
      arg = {key, value};
      return;
    }
  }
}

void Span::Begin(const char* name, const char* category, Timing timing) {
  name_ = name;
  category_ = category;
  start_ = Clock::now();
  if (timing == Timing::kDevice && device_thread) start_mark_ = TheRecorder().device->Mark();
}

void Span::End() {
  const int64_t end_mark = start_mark_ >= 0 && device_thread ? TheRecorder().device->Mark() : -1;
  if (end_mark < 0) {
    RecordSpan(name_, category_, start_, Clock::now(), args_);
    return;
  }
  Event e;
  e.phase = 'X';
  e.name = name_;
  e.category = category_;
  e.args = args_;
  e.start_mark = start_mark_;
  e.end_mark = end_mark;
  Append(e, start_);  // its times are the marks', set at Stop()
}

void RecordSpan(const char* name, const char* category, Clock::time_point start, Clock::time_point end,
                const Args& args) {
  if (!On()) return;
  Event e;
  e.phase = 'X';
  e.name = name;
  e.category = category;
  e.duration_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(end - start).count();
  e.args = args;
  Append(e, start);
}

void RecordInterval(const char* name, const char* category, int64_t id, Clock::time_point start, Clock::time_point end,
                    const Args& args) {
  if (!On()) return;
  Event e;
  e.name = name;
  e.category = category;
  e.id = id;
  e.phase = 'b';
  e.args = args;
  Append(e, start);
  e.phase = 'e';
  e.args = {};
  Append(e, end);
}

void RecordCounter(const char* name, Clock::time_point at, int64_t value) {
  if (!On()) return;
  Event e;
  e.phase = 'C';
  e.name = name;
  e.category = "counter";
  e.args[0] = {"bytes", value};
  Append(e, at);
}

std::string ToJson(const Recording& recording, int rank, const std::string& metadata) {
  std::vector<const Event*> events;
  for (const Event& e : recording.events) events.push_back(&e);
  // In time order, an enclosing span before the spans it holds (spans are recorded as they end).
  std::stable_sort(events.begin(), events.end(), [](const Event* a, const Event* b) {
    if (a->start_ns != b->start_ns) return a->start_ns < b->start_ns;
    return a->duration_ns > b->duration_ns;
  });
  std::vector<std::string> lines;
  lines.push_back(
      fmt::format(R"({{"ph":"M","name":"process_name","pid":{},"tid":0,"args":{{"name":"rank {}"}}}})", rank, rank));
  lines.push_back(fmt::format(R"({{"ph":"M","name":"process_sort_index","pid":{},"tid":0,"args":{{"sort_index":{}}}}})",
                              rank, rank));
  std::vector<bool> used(recording.thread_names.size(), false);
  for (const Event* e : events) used[e->thread] = true;
  for (size_t t = 0; t < recording.thread_names.size(); ++t) {
    if (!used[t]) continue;  // named threads that did nothing in the window
    lines.push_back(fmt::format(R"({{"ph":"M","name":"thread_name","pid":{},"tid":{},"args":{{"name":{}}}}})", rank, t,
                                JsonQuoted(recording.thread_names[t])));
  }
  for (const Event* e : events) lines.push_back(EventJson(*e, rank));
  std::string out =
      "{\"clustertrain_trace\":1,\"displayTimeUnit\":\"ms\",\"otherData\":{" + metadata + "},\"traceEvents\":[\n";
  for (size_t i = 0; i < lines.size(); ++i) out += lines[i] + (i + 1 < lines.size() ? ",\n" : "\n");
  return out + "]}\n";
}

}  // namespace ct::trace
