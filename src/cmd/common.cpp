#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>
#include <thread>

#include "cluster/openmp_env.h"
#include "cmd/command.h"
#include "util/error.h"
#include "util/launcher_env.h"

namespace ct {

int ReportEarlyError(const std::string& message, int code) {
  if (IsLauncherRankZero()) {
    std::fprintf(stderr, "clustertrain: error: %s\n", message.c_str());
    return code;
  }
  // Another rank. Rank 0 normally meets the same error, prints it and exits, and the launcher
  // then ends this process. Exiting first instead would let the launcher end rank 0 before its
  // message is out (it ends the job at the first non-zero exit), however fast the machine. If
  // rank 0 met no error (a file missing on this node only), it is waiting in MPI_Init: after
  // a while this rank says why itself.
  std::this_thread::sleep_for(std::chrono::seconds(10));
  std::fprintf(stderr, "clustertrain: error (rank %d on %s): %s\n", LauncherRank().value_or(-1), ProcessHost().c_str(),
               message.c_str());
  return code;
}

std::string OutputFileProblem(const std::string& path, bool force, const std::string& if_exists) {
  namespace fs = std::filesystem;
  if (!force && fs::exists(path)) return "'" + path + "' exists; pass --force to overwrite it" + if_exists;
  const fs::path dir = fs::absolute(path).parent_path();
  if (!fs::is_directory(dir)) {
    return "cannot write '" + path + "': directory '" + dir.string() + "' does not exist; create it first";
  }
  if (access(dir.c_str(), W_OK | X_OK) != 0) {
    return "cannot write '" + path + "': directory '" + dir.string() + "' is not writable by this user";
  }
  return "";
}

std::string ProcessHost() {
  char name[256] = {0};
  gethostname(name, sizeof(name) - 1);
  return name;
}

int LoadConfigBeforeMpi(const std::string& path, const std::vector<std::string>& overrides, bool check_inputs,
                        Config& config) {
  try {
    config = LoadConfig(path, overrides);
    if (check_inputs) CheckInputFiles(config);
  } catch (const Error& e) {
    return ReportEarlyError(e.what(), e.ExitCode());
  }
  return 0;
}

void DropOpenMpAffinity(const Config& config, char** argv) {
  if (config.runtime.bind == Binding::kAuto) ReexecWithoutOpenMpAffinity(argv);
}

}  // namespace ct
