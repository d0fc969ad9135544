#include <unistd.h>

#include <cstdio>
#include <filesystem>

#include "cluster/openmp_env.h"
#include "cmd/command.h"
#include "util/error.h"
#include "util/launcher_env.h"

namespace ct {

int ReportEarlyError(const std::string& message, int code) {
  if (IsLauncherRankZero()) std::fprintf(stderr, "clustertrain: error: %s\n", message.c_str());
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
