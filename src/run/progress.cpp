#include "run/progress.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "util/logging.h"

namespace ct {

namespace {
bool DrawBar(ProgressStyle style) {
  if (style != ProgressStyle::kAuto) return style == ProgressStyle::kBar;
  return ::isatty(STDOUT_FILENO) && std::getenv("OMPI_COMM_WORLD_SIZE") == nullptr;
}
}  // namespace

Progress::Progress(bool enabled, ProgressStyle style, int64_t log_every, int64_t epoch, int64_t epochs, int64_t steps,
                   int64_t samples_per_step)
    : enabled_(enabled),
      terminal_(enabled && DrawBar(style)),
      log_every_(log_every),
      epoch_(epoch),
      epochs_(epochs),
      steps_(steps),
      samples_per_step_(samples_per_step) {}

void Progress::Step(int64_t done) {
  if (!enabled_) return;
  const auto now = Clock::now();
  const double elapsed = std::chrono::duration<double>(now - start_).count();
  const double rate = elapsed > 0 ? static_cast<double>(done * samples_per_step_) / elapsed : 0;
  const double eta = done > 0 ? elapsed * static_cast<double>(steps_ - done) / static_cast<double>(done) : 0;
  if (terminal_) {
    if (done != steps_ && now - last_draw_ < std::chrono::milliseconds(250)) return;
    last_draw_ = now;
    constexpr int kWidth = 30;
    const int filled = static_cast<int>(kWidth * done / std::max<int64_t>(steps_, 1));
    std::fprintf(stdout, "\r\033[Kepoch %lld/%lld [%s%s] %lld/%lld  %.0f samples/s  ETA %.0f s",
                 static_cast<long long>(epoch_), static_cast<long long>(epochs_), std::string(filled, '#').c_str(),
                 std::string(kWidth - filled, '.').c_str(), static_cast<long long>(done),
                 static_cast<long long>(steps_), rate, eta);
    std::fflush(stdout);
    drawn_ = true;
  } else if (log_every_ > 0 && done % log_every_ == 0 && done != steps_) {
    spdlog::info("  epoch {}/{} batch {}/{}  {:.0f} samples/s  ETA {:.0f} s", epoch_, epochs_, done, steps_, rate, eta);
  }
}

void Progress::Finish() {
  if (drawn_) {
    std::fprintf(stdout, "\r\033[K");
    std::fflush(stdout);
  }
}

}  // namespace ct
