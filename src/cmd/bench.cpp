// clustertrain bench allreduce | step | io: measurements printed as tables (src/bench/).
#include <memory>

#include "bench/allreduce_bench.h"
#include "bench/io_bench.h"
#include "bench/step_bench.h"
#include "cmd/command.h"
#include "util/error.h"

namespace ct {
namespace {

struct BenchArgs {
  std::string config_path;
  std::vector<std::string> overrides;
  AllReduceBenchOptions allreduce;
  StepBenchOptions step;
  IoBenchOptions io;
  CLI::App* allreduce_cli = nullptr;
  CLI::App* step_cli = nullptr;
  CLI::App* io_cli = nullptr;
};

// -c/--config and --set, which allreduce and step share.
void AddConfigOptions(CLI::App* cli, BenchArgs& args) {
  cli->add_option("-c,--config", args.config_path, "model, batch and runtime settings (default: built-in)")
      ->check(RegularFile());
  cli->add_option("--set", args.overrides, "override a config key (repeatable)")->type_name("KEY=VALUE");
}

int RunBenchCommand(const BenchArgs& args, int argc, char** argv) {
  if (*args.io_cli) {
    return RunWithMpi(argc, argv, [&](const MpiWorld& world) { RunIoBench(args.io, world); });
  }
  const bool step = static_cast<bool>(*args.step_cli);
  Config config;
  // bench step reads the training file.
  if (const int code = LoadConfigBeforeMpi(args.config_path, args.overrides, /*check_inputs=*/step, config)) {
    return code;
  }
  if (config.train.batch_size == 0) {
    return ReportEarlyError(
        "bench times the batch it is given: train.batch_size is auto; --set train.batch_size=N (a training run "
        "with auto writes its choice to output.dir/config.yaml)",
        kExitUsage);
  }
  DropOpenMpAffinity(config, argv);
  return RunWithMpi(argc, argv, [&](const MpiWorld& world) {
    if (step) {
      RunStepBench(config, world, args.step);
    } else {
      RunAllReduceBench(config, world, args.allreduce);
    }
  });
}

}  // namespace

Command AddBenchCommand(CLI::App& app) {
  auto args = std::make_shared<BenchArgs>();
  CLI::App* cli = app.add_subcommand("bench", "measure: print tables of where the time goes (run under mpirun)");
  cli->require_subcommand(1);

  args->allreduce_cli = cli->add_subcommand(
      "allreduce",
      "the demo model's gradients: raw vs bucketed vs per-parameter all-reduce, and a training step "
      "with overlap on and off");
  AddConfigOptions(args->allreduce_cli, *args);
  args->allreduce_cli->add_option("--length", args->allreduce.length, "waveform length")->check(AtLeastOne());
  args->allreduce_cli->add_option("--iterations", args->allreduce.iterations, "timed runs of each variant")
      ->check(AtLeastOne());

  args->step_cli = cli->add_subcommand(
      "step",
      "the compute-only bound: forward, backward and Adam of the configured model and precision on training "
      "rows in memory, per process (JSON)");
  AddConfigOptions(args->step_cli, *args);
  args->step_cli->add_option("--steps", args->step.steps, "timed steps")->check(AtLeastOne());
  args->step_cli->add_option("--warmup", args->step.warmup, "untimed steps before them")->check(FiniteNonNegative());
  args->step_cli
      ->add_option("--adam", args->step.adam,
                   "Adam's update kernel: auto (training's: LibTorch's fused kernel on CUDA, one pass on the CPU), "
                   "one-pass, passes (ATen's five elementwise passes) or fused (LibTorch's, where it has one)")
      ->check(CLI::IsMember({"auto", "one-pass", "passes", "fused"}));

  args->io_cli = cli->add_subcommand(
      "io", "read throughput of data.sharding static and blocks (and the seed layout) against the page cache");
  IoBenchOptions& io = args->io;
  args->io_cli->add_option("file", io.file, "HDF5 file in the contiguous layout (input, target)")
      ->required()
      ->check(RegularFile());
  args->io_cli->add_option("--seed", io.seed_file, "the same rows in the one-group-per-sample layout")
      ->check(RegularFile());
  args->io_cli
      ->add_option("--as", io.forms,
                   "the same rows stored another way, compared with FILE through the training loaders "
                   "(repeatable): NAME=FILES, FILES a path, a glob or a comma-separated list")
      ->type_name("NAME=FILES");
  args->io_cli->add_option("--repeats", io.repeats, "rounds; medians are reported")->check(AtLeastOne());
  args->io_cli->add_option("--batch", io.batch, "rows per batch of the blocks stream")->check(AtLeastOne());
  return {cli, [args](int argc, char** argv) { return RunBenchCommand(*args, argc, argv); }};
}

}  // namespace ct
