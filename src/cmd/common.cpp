#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "cluster/agree.h"
#include "cluster/openmp_env.h"
#include "cmd/command.h"
#include "util/edit_distance.h"
#include "util/error.h"
#include "util/file_kind.h"
#include "util/launcher_env.h"
#include "util/startup_deadline.h"

namespace ct {

int ReportEarlyError(const std::string& message, int code) {
  if (LauncherWorldSize().value_or(1) <= 1) {  // one process: no one else to tell
    std::fprintf(stderr, "clustertrain: error: %s\n", message.c_str());
    return code;
  }
  // Several processes. They meet in MPI and agree (cluster/agree.h): a message every rank met
  // is printed once, by rank 0; one that only some met (a file missing on one node) names their
  // ranks and hosts; and every process ends at once. Printing and exiting without MPI would
  // leave this to the launcher, and launchers differ: Open MPI's mpirun ends the job at the
  // first non-zero exit, possibly before rank 0's message is out, while MPICH's Hydra, Intel MPI
  // and srun without --kill-on-bad-exit leave the other ranks running (those that met no error
  // wait in MPI_Init for ever).
  // A rank that never reaches MPI (stopped before it) must not hold this one in MPI_Init: the
  // start-up deadline at runtime.watchdog_s's default.
  StartStartupDeadline(60);
  int argc = 0;
  char** argv = nullptr;
  return RunWithMpi(argc, argv, [&](const MpiWorld& world) { RunAgreed(world, [&] { throw Error(message, code); }); });
}

std::string OutputFileProblem(const std::string& path, bool force, const std::string& if_exists,
                              const std::vector<std::string>& inputs) {
  namespace fs = std::filesystem;
  if (fs::is_directory(path)) return "'" + path + "' is a directory; give a file name (e.g. " + path + "/data.h5)";
  for (const std::string& input : inputs) {
    // The same inode (a hard link, another spelling of the path) or the same real path.
    std::error_code inode_error, out_error, in_error;
    const bool same_inode = fs::equivalent(path, input, inode_error);
    const fs::path out_real = fs::weakly_canonical(path, out_error), in_real = fs::weakly_canonical(input, in_error);
    if (same_inode || (!out_error && !in_error && !out_real.empty() && out_real == in_real)) {
      return "the output '" + path + "' is the input '" + input +
             "': it would be destroyed while it is read (--force never overwrites an input); write the output "
             "to another file";
    }
  }
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

namespace {

// A finite number parsed from `text`, or NaN.
double ParseNumber(const std::string& text) {
  try {
    size_t used = 0;
    const double value = std::stod(text, &used);
    return used == text.size() ? value : std::nan("");
  } catch (const std::exception&) {
    return std::nan("");
  }
}

// A finite number >= min; `what` says so in the message ("a number >= 1").
CLI::Validator FiniteAtLeast(double min, const std::string& what, const std::string& description) {
  return CLI::Validator(
      [=](std::string& text) {
        const double value = ParseNumber(text);
        return std::isfinite(value) && value >= min ? std::string() : "must be " + what + ", not '" + text + "'";
      },
      description);
}

}  // namespace

CLI::Validator AtLeastOne() { return FiniteAtLeast(1, "a number >= 1", ">= 1"); }

CLI::Validator FiniteNonNegative() { return FiniteAtLeast(0, "a finite number >= 0", ">= 0"); }

CLI::Validator RegularFile() {
  return CLI::Validator(
      [](std::string& path) {
        const std::string problem = RegularFileProblem(path);
        if (problem.empty()) return problem;
        // A pipe or device cannot be read twice or seeked: its content must be in a file first.
        const bool special = problem.find("not a regular file") != std::string::npos;
        return problem + (special ? "; copy what it holds into a regular file and give that" : "; check the path");
      },
      "FILE");
}

CLI::Validator WholeNumber() {
  return CLI::Validator(
      [](std::string& text) {
        // Digits only: CLI11 would read "-1" into an unsigned option as 18446744073709551615.
        const bool digits = !text.empty() && text.find_first_not_of("0123456789") == std::string::npos;
        errno = 0;
        if (digits) std::strtoull(text.c_str(), nullptr, 10);
        return digits && errno == 0 ? std::string()
                                    : "must be a whole number from 0 to 18446744073709551615, not '" + text + "'";
      },
      ">= 0");
}

std::string ClosestSubcommand(const CLI::App& app, const std::string& typed) {
  std::string best;
  size_t best_distance = 3;  // at most two edits away, or a prefix
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
    const std::string& name = sub->get_name();
    if (name == typed) return name;
    const size_t distance = name.rfind(typed, 0) == 0 ? 1 : EditDistance(typed, name);
    if (distance < best_distance) {
      best = name;
      best_distance = distance;
    }
  }
  return best;
}

std::string MistypedCommand(const CLI::App& app, int argc, char** argv) {
  const CLI::App* level = &app;
  std::string words;  // the command words so far: "bench "
  for (int i = 1; i < argc && argv[i][0] != '-'; ++i) {
    const std::vector<const CLI::App*> subs = level->get_subcommands([](const CLI::App*) { return true; });
    if (subs.empty()) return "";  // a positional argument of the command, not a command word
    const std::string typed = argv[i];
    const std::string closest = ClosestSubcommand(*level, typed);
    if (closest != typed) {
      std::string names;
      for (const CLI::App* sub : subs) names += (names.empty() ? "" : ", ") + words + sub->get_name();
      return "unknown command '" + words + typed + "'" +
             (closest.empty() ? "" : "; did you mean '" + words + closest + "'?") + " Commands: " + names +
             " (clustertrain " + words + "--help)";
    }
    level = level->get_subcommand(typed);
    words += typed + " ";
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
