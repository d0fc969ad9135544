// Typed errors and the process identity that every error message carries.
//
// Every failure a user can cause or meet is thrown as a ct::Error subclass. The fatal path in
// main() catches it once, logs it with the rank and host, and ends every rank. The exit code
// tells scripts (and the sbatch requeue logic) what kind of failure it was; README lists them.
#pragma once

#include <stdexcept>
#include <string>

namespace ct {

enum ExitCode : int {
  kExitOk = 0,
  kExitFailure = 1,        // internal or unexpected error
  kExitUsage = 2,          // bad command line or config
  kExitData = 3,           // missing or malformed dataset file
  kExitComm = 4,           // MPI / NCCL / CUDA failure
  kExitNonFinite = 5,      // the training loss became NaN or infinite
  kExitPreempted = 75,     // stopped by SIGTERM/SIGUSR1 after writing a checkpoint: requeue and --resume auto
  kExitInterrupted = 130,  // stopped by SIGINT (Ctrl-C) after writing a checkpoint: no requeue
};

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& what, int exit_code = kExitFailure, bool agreed = false)
      : std::runtime_error(what), exit_code_(exit_code), agreed_(agreed) {}
  int ExitCode() const { return exit_code_; }
  // Every rank holds this same error (cluster/agree.h): rank 0 alone reports it.
  bool Agreed() const { return agreed_; }

 private:
  int exit_code_;
  bool agreed_;
};

// `agreed`: every rank holds this same error (cluster/agree.h), so rank 0 alone reports it.
class ConfigError : public Error {
 public:
  explicit ConfigError(const std::string& what, bool agreed = false) : Error(what, kExitUsage, agreed) {}
};

// Not a failure: every rank stopped at the same step and the checkpoint is written.
class Preempted : public Error {
 public:
  explicit Preempted(const std::string& what, int exit_code = kExitPreempted) : Error(what, exit_code) {}
};

class DataError : public Error {
 public:
  explicit DataError(const std::string& what, bool agreed = false) : Error(what, kExitData, agreed) {}
};

class CommError : public Error {
 public:
  explicit CommError(const std::string& what, bool agreed = false) : Error(what, kExitComm, agreed) {}
};

// "rank 3 on node17": set once MPI knows who we are; used by the check macros.
void SetProcessIdentity(int rank, const std::string& host);
const std::string& ProcessIdentity();

// "src/comm/x.cpp:42 (rank 3 on node17)": where a library call failed.
std::string Where(const char* file, int line);

// The message of any exception as a user should see it: LibTorch's (c10::Error) without its
// C++ stack trace and source location, and never more than its first paragraph; an allocation
// that failed says so with the settings that decide memory.
std::string ExceptionText(const std::exception& e);

// An allocation failed (std::bad_alloc, LibTorch's CPU or CUDA allocator): exit kExitUsage, the
// run asks for more memory than it has.
bool IsOutOfMemory(const std::exception& e);

// The text up to its first line break.
std::string FirstLine(const std::string& text);

}  // namespace ct
