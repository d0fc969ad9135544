// clustertrain train: the data-parallel training run (src/train/trainer.h).
#include <iostream>
#include <memory>

#include "cmd/command.h"
#include "train/trainer.h"
#include "util/error.h"
#include "util/launcher_env.h"
#include "util/startup_deadline.h"

namespace ct {
namespace {

struct TrainArgs {
  std::string config_path;
  std::vector<std::string> overrides;
  TrainOptions options;
  bool help_config = false;
  bool print_config = false;
};

int RunTrainCommand(const TrainArgs& args, int argc, char** argv) {
  if (args.help_config) {
    if (IsLauncherRankZero()) std::cout << ConfigKeyHelp();
    return kExitOk;
  }
  Config config;
  if (const int code = LoadConfigBeforeMpi(args.config_path, args.overrides, /*check_inputs=*/false, config)) {
    return code;
  }
  if (args.print_config) {
    if (IsLauncherRankZero()) std::cout << ConfigToYaml(config);
    return kExitOk;
  }
  // The input files and the run directory are checked after MPI starts, so that a problem only
  // some nodes have is agreed and reported once, with the ranks and hosts it concerns.
  DropOpenMpAffinity(config, argv);
  // From here to the trainer's hang watchdog (after the ranks first meet).
  StartStartupDeadline(config.runtime.watchdog_s);
  return RunWithMpi(
      argc, argv, [&](const MpiWorld& world) { RunTraining(config, world, args.options); },
      StopSignals::kStopTrainingAtAStep);
}

}  // namespace

Command AddTrainCommand(CLI::App& app) {
  auto args = std::make_shared<TrainArgs>();
  CLI::App* cli = app.add_subcommand("train", "train a model on HDF5 data (see configs/gw_vae.yaml)");
  cli->add_option("-c,--config", args->config_path, "YAML run configuration")->check(RegularFile());
  cli->add_option("--set", args->overrides, "override a config key: --set train.epochs=5 (repeatable)")
      ->type_name("KEY=VALUE");
  CLI::Option* resume =
      cli->add_option("--resume", args->options.resume,
                      "continue from a checkpoint: auto (the newest readable one in output.dir/checkpoints, or start "
                      "fresh) or a path")
          ->type_name("auto|PATH");
  cli->add_flag("--overwrite", args->options.overwrite,
                "output.dir holds an earlier run: move it aside to <dir>.replaced-<time> (never deleted) and start "
                "anew")
      ->excludes(resume);
  cli->add_flag("--allow-config-changes", args->options.allow_config_changes,
                "resume although settings that change what is trained (data, batch, lr, seed, ...) differ from the "
                "checkpoint's; each change is still listed")
      ->needs(resume);
  cli->add_flag("--help-config", args->help_config, "list every config key with its type and default, then exit");
  cli->add_flag("--print-config", args->print_config,
                "print the resolved configuration (defaults, file and --set merged) as YAML, then exit");
  return {cli, [args](int argc, char** argv) { return RunTrainCommand(*args, argc, argv); }};
}

}  // namespace ct
