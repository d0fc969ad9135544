#include "util/logging.h"

#include <spdlog/sinks/base_sink.h>
#include <spdlog/sinks/basic_file_sink.h>
#include <spdlog/sinks/stdout_sinks.h>

#include <cstdio>
#include <mutex>

#include <filesystem>
#include <vector>

#include "util/error.h"

namespace ct {
namespace {

// Rank 0's console: progress to stdout, warnings and errors to stderr (Slurm's .err file).
class SplitConsoleSink : public spdlog::sinks::base_sink<std::mutex> {
 protected:
  void sink_it_(const spdlog::details::log_msg& msg) override {
    const bool problem = msg.level >= spdlog::level::warn;
    std::FILE* stream = problem ? stderr : stdout;
    const std::string text(msg.payload.data(), msg.payload.size());
    std::fprintf(stream, "%s%s\n", problem ? (msg.level == spdlog::level::warn ? "warning: " : "error: ") : "",
                 text.c_str());
    std::fflush(stream);
  }
  void flush_() override {
    std::fflush(stdout);
    std::fflush(stderr);
  }
};

std::vector<spdlog::sink_ptr> ConsoleSinks(int rank) {
  std::vector<spdlog::sink_ptr> sinks;
  if (rank == 0) {
    auto out = std::make_shared<SplitConsoleSink>();
    out->set_level(spdlog::level::info);
    sinks.push_back(out);
  } else {
    auto err = std::make_shared<spdlog::sinks::stderr_sink_mt>();
    err->set_pattern("[rank " + std::to_string(rank) + "] %l: %v");
    err->set_level(spdlog::level::warn);
    sinks.push_back(err);
  }
  return sinks;
}

void Install(std::vector<spdlog::sink_ptr> sinks) {
  auto logger = std::make_shared<spdlog::logger>("clustertrain", sinks.begin(), sinks.end());
  logger->set_level(spdlog::level::debug);
  logger->flush_on(spdlog::level::info);
  spdlog::set_default_logger(logger);
}

}  // namespace

void InitConsoleLogging(int rank) { Install(ConsoleSinks(rank)); }

void InitRunLogging(int rank, const std::string& run_dir) {
  const std::filesystem::path log_dir = std::filesystem::path(run_dir) / "logs";
  std::error_code ec;
  std::filesystem::create_directories(log_dir, ec);
  if (ec) {
    throw Error("cannot create log directory '" + log_dir.string() + "': " + ec.message() +
                "; set output.dir to a writable location");
  }
  auto sinks = ConsoleSinks(rank);
  auto file = std::make_shared<spdlog::sinks::basic_file_sink_mt>(
      (log_dir / ("rank-" + std::to_string(rank) + ".log")).string(), /*truncate=*/true);
  file->set_pattern("[%Y-%m-%d %H:%M:%S.%e] [%l] %v");
  file->set_level(spdlog::level::debug);
  sinks.push_back(file);
  Install(sinks);
}

}  // namespace ct
