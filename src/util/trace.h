// The timeline trace (output.trace): spans of what each thread of this rank did during a window
// of global steps, written as a Chrome trace-event JSON file that Perfetto's UI and
// chrome://tracing open (run/trace_window.h opens and closes the window and writes the file).
//
// One process-wide recorder, so that the threads that do the work (the training loop, the
// gradient hooks, the MPI communication thread, the block reader) record without being handed
// anything. Off, the only cost of a span is one relaxed atomic load. On, a span takes the host's
// steady clock twice and appends one event under a mutex (a few events per step and bucket).
//
// Names and argument keys are string literals (the events keep the pointers).
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace ct::trace {

using Clock = std::chrono::steady_clock;

namespace detail {
extern std::atomic<bool> recording;
}

// Whether a window is open: the check every recording site makes first.
inline bool On() { return detail::recording.load(std::memory_order_relaxed); }

struct Arg {
  const char* key = nullptr;
  int64_t value = 0;
};
using Args = std::array<Arg, 3>;  // unused entries have key == nullptr

struct Event {
  char phase = 'X';  // X: a span on a thread; b/e: the start/end of an interval on an async track; C: a counter
  const char* name = "";
  const char* category = "";
  int thread = 0;  // the recorder's number for the thread (X, C)
  int64_t start_ns = 0;
  int64_t duration_ns = 0;  // X only
  int64_t id = 0;           // b/e: the async track
  Args args{};
  int64_t start_mark = -1, end_mark = -1;  // a device span: its DeviceTimeline marks, timed at Stop()
};

// A device's own clock, for the spans of the thread that opened the window (the training
// thread): each span's start and end are marks recorded on the device's current stream (CUDA
// events: no host synchronisation), read after the window (run/device_timeline.h makes one).
class DeviceTimeline {
 public:
  virtual ~DeviceTimeline() = default;
  // At the opening, `zero` just taken: the device's reference point (it may synchronise).
  virtual void Begin(Clock::time_point zero) = 0;
  // A mark on the calling thread's current stream, or -1 where none can be recorded now.
  virtual int64_t Mark() = 0;
  // After the window (synchronises): each mark's time in ns from `zero`, by mark.
  virtual std::vector<int64_t> Resolve() = 0;
  virtual std::string Describe() const = 0;  // for the file's clock metadata
};

// Whether a span measures the device's work or the host's (waits, files) on the training thread.
enum class Timing { kDevice, kHost };

// The recorded events and thread names, taken when the window closes.
struct Recording {
  std::vector<Event> events;
  std::vector<std::string> thread_names;  // index: Event::thread
  Clock::time_point zero;                 // the time every timestamp counts from
  std::string device_clock;               // the device timeline's description; "" without one
};

// Starts recording (timestamps count from `zero`); drops anything recorded before. With a
// `device` timeline, the calling thread's spans (Timing::kDevice) are timed by the device.
void Start(Clock::time_point zero, std::unique_ptr<DeviceTimeline> device = nullptr);
// Stops recording and hands over what was recorded.
Recording Stop();

// The calling thread's name in the trace (default "thread <n>"); call it at the thread's start.
void NameThisThread(const std::string& name);

// A span on the calling thread, from construction to destruction.
class Span {
 public:
  Span(const char* name, const char* category, Timing timing = Timing::kDevice) {
    if (On()) Begin(name, category, timing);
  }
  ~Span() {
    if (name_) End();
  }
  Span(const Span&) = delete;
  Span& operator=(const Span&) = delete;
  void Set(const char* key, int64_t value);  // up to three arguments

 private:
  void Begin(const char* name, const char* category, Timing timing);
  void End();
  const char* name_ = nullptr;
  const char* category_ = nullptr;
  Clock::time_point start_;
  int64_t start_mark_ = -1;
  Args args_{};
};

// A span on the calling thread whose times were taken elsewhere (on another thread, or before
// its size was known).
void RecordSpan(const char* name, const char* category, Clock::time_point start, Clock::time_point end,
                const Args& args = {});
// An interval on async track `id` (launch -> done of a collective: intervals may overlap).
void RecordInterval(const char* name, const char* category, int64_t id, Clock::time_point start, Clock::time_point end,
                    const Args& args = {});
// A counter's value from time `at` on (one track per counter name).
void RecordCounter(const char* name, Clock::time_point at, int64_t value);

// The recording as Chrome trace-event JSON, one event per line (run/trace_report.h reads it
// back): process `rank`, with `metadata` (a JSON object's members, without braces) in otherData.
std::string ToJson(const Recording& recording, int rank, const std::string& metadata);

// `text` as a JSON string, quotes included.
std::string JsonQuoted(const std::string& text);

}  // namespace ct::trace
