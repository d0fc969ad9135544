// Logging: every rank writes its own file (logs/rank-N.log); rank 0 also prints to the console.
// Warnings and errors from any rank reach stderr so that a problem on rank 5 is not hidden.
#pragma once

#include <spdlog/spdlog.h>

#include <string>

namespace ct {

// Console-only logging for the time before the run directory exists.
void InitConsoleLogging(int rank);

// Adds logs/rank-<rank>.log under run_dir (created if needed) to the console sinks.
void InitRunLogging(int rank, const std::string& run_dir);

}  // namespace ct
