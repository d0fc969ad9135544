// clustertrain: data-parallel training of scientific models on GPU clusters.
//
// Command-line and config errors are found before MPI starts and printed once (by the rank the
// launcher calls 0). After that, one fatal path: any error on any rank is logged with its rank
// and host, communicators are aborted, and MPI_Abort ends every rank of the job.
#include <CLI/CLI.hpp>

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>

#include "bench/allreduce_bench.h"
#include "bench/io_bench.h"
#include "bench/step_bench.h"
#include "cluster/mpi_world.h"
#include "cluster/preemption.h"
#include "cluster/openmp_env.h"
#include "comm/communicator.h"
#include "comm/make_communicator.h"
#include "data/h5_info.h"
#include "data/seed_converter.h"
#include "data/synthetic_writer.h"
#include "train/predict.h"
#include "train/trainer.h"
#include "util/config.h"
#include "util/error.h"
#include "util/launcher_env.h"
#include "util/logging.h"

namespace {

struct MakeDataArgs {
  std::string out;
  int64_t samples = 16384;
  bool force = false;
  ct::ChirpOptions chirp;
};

int ReportEarlyError(const std::string& message, int code) {
  if (ct::IsLauncherRankZero()) std::fprintf(stderr, "clustertrain: error: %s\n", message.c_str());
  return code;
}

// Why an output file cannot be written, checked before MPI starts (so that every rank does not
// meet it inside HDF5 and say so in HDF5's words); "" when it can.
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

// Runs `body` with MPI up; any exception ends every rank.
template <class Body>
int RunWithMpi(int argc, char** argv, Body body) {
  std::unique_ptr<ct::MpiWorld> world_ptr;
  try {
    world_ptr = std::make_unique<ct::MpiWorld>(&argc, &argv);
  } catch (const ct::Error& e) {
    std::fprintf(stderr, "clustertrain: error: %s\n", e.what());
    MPI_Abort(MPI_COMM_WORLD, e.ExitCode());
    return e.ExitCode();
  }
  const ct::MpiWorld& world = *world_ptr;
  ct::InitConsoleLogging(world.Rank());
  ct::InstallPreemptionHandlers();  // after MPI_Init, which may install handlers of its own
  try {
    const std::string singleton = ct::SingletonError(world.Size(), ct::LauncherWorldSize());
    if (!singleton.empty()) throw ct::CommError(singleton);
    body(world);
    return ct::kExitOk;
  } catch (const ct::Preempted& e) {
    // All ranks agreed to stop at the same step: a clean exit, no abort.
    if (world.Rank() == 0) spdlog::warn("{}", e.what());
    return e.ExitCode();
  } catch (const std::exception& e) {
    const auto* error = dynamic_cast<const ct::Error*>(&e);
    const int code = error ? error->ExitCode() : ct::kExitFailure;
    if (error && error->Agreed()) {
      // Every rank has this error: one message, from rank 0 (the rest only in their log files).
      if (world.Rank() == 0) spdlog::error("{}", e.what());
      else spdlog::debug("{} ({})", e.what(), ct::ProcessIdentity());
    } else {
      spdlog::error("{} ({})", e.what(), ct::ProcessIdentity());
    }
    spdlog::default_logger()->flush();
    ct::AbortAllCommunicators();
    if (world.Size() > 1) world.Abort(code);  // ends every rank, not just this one
    return code;
  }
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"clustertrain " CT_VERSION
               ": data-parallel trainer for scientific models (one process per GPU or core group).\n"
               "Launch with mpirun or srun; every subcommand also runs as a single process.\n"
               "Communication backends built: " + ct::BuiltBackends()};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("clustertrain ") + CT_VERSION);

  std::string config_path;
  std::vector<std::string> overrides;
  bool help_config = false;
  bool print_config = false;
  std::string resume;
  CLI::App* train = app.add_subcommand("train", "train a model on HDF5 data (see configs/gw_vae.yaml)");
  train->add_option("-c,--config", config_path, "YAML run configuration")->check(CLI::ExistingFile);
  train->add_option("--set", overrides, "override a config key: --set train.epochs=5 (repeatable)")
      ->type_name("KEY=VALUE");
  train->add_option("--resume", resume,
                    "continue from a checkpoint: auto (the newest in output.dir/checkpoints, or start fresh) or a path")
      ->type_name("auto|PATH");
  train->add_flag("--help-config", help_config, "list every config key with its type and default, then exit");
  train->add_flag("--print-config", print_config,
                  "print the resolved configuration (defaults, file and --set merged) as YAML, then exit");

  MakeDataArgs make;
  CLI::App* make_data = app.add_subcommand(
      "make-data", "write a synthetic gravitational-wave chirp dataset (input: noisy strain, target: clean)");
  make_data->add_option("-o,--out", make.out, "output HDF5 file")->required();
  make_data->add_option("-n,--samples", make.samples, "number of rows")->check(CLI::PositiveNumber);
  make_data->add_option("-l,--length", make.chirp.length, "samples per waveform")->check(CLI::PositiveNumber);
  make_data->add_option("--noise", make.chirp.noise_std, "noise standard deviation")->check(CLI::NonNegativeNumber);
  make_data->add_option("--seed", make.chirp.seed, "seed; rows depend only on it and their index");
  make_data->add_flag("-f,--force", make.force, "overwrite an existing file");

  ct::ConvertOptions convert_options;
  bool convert_force = false;
  CLI::App* convert = app.add_subcommand(
      "convert",
      "convert a one-group-per-sample HDF5 file (sample0/input, sample0/target, ...) to the contiguous layout "
      "training reads (input [N, ...], target [N, ...], float32, chunked by rows); runs on any number of ranks");
  convert->add_option("seed", convert_options.seed_path, "HDF5 file in the one-group-per-sample layout")
      ->required()
      ->check(CLI::ExistingFile);
  convert->add_option("out", convert_options.out_path, "output HDF5 file")->required();
  convert->add_flag("--verify", convert_options.verify,
                    "after writing, read the output back and compare every sample with the seed file");
  convert->add_flag("--verify-only", convert_options.verify_only,
                    "compare an existing output with the seed file; write nothing");
  convert->add_flag("-f,--force", convert_force, "overwrite an existing output file");
  convert->add_flag("!--no-progress", convert_options.progress, "no progress lines");

  ct::PredictOptions predict_options;
  bool predict_force = false;
  CLI::App* predict = app.add_subcommand(
      "predict", "write a trained model's reconstructions (recon) and latent means (mu) for every row of an HDF5 "
                 "file to a new HDF5 file, in parallel");
  predict->add_option("--checkpoint", predict_options.checkpoint,
                      "checkpoint written by train (output.dir/checkpoints/epoch-NNNNNN.pt); its config rebuilds the model")
      ->required()
      ->check(CLI::ExistingFile);
  predict->add_option("--data", predict_options.data, "HDF5 file with input rows (data.input_key of the checkpoint's config)")
      ->required()
      ->check(CLI::ExistingFile);
  predict->add_option("--out", predict_options.out, "output HDF5 file: datasets recon [N, ...] and mu [N, latent]")
      ->required();
  predict->add_option("--set", predict_options.overrides,
                      "override a key of the checkpoint's config, e.g. train.device=cpu or data.input_key=strain")
      ->type_name("KEY=VALUE");
  predict->add_option("--batch", predict_options.batch, "rows per forward pass")->check(CLI::PositiveNumber);
  predict->add_flag("-f,--force", predict_force, "overwrite an existing output file");

  std::string info_path;
  CLI::App* info = app.add_subcommand("info", "describe an HDF5 file: datasets, shapes, dtypes, chunks, compression");
  info->add_option("file", info_path, "HDF5 file")->required()->check(CLI::ExistingFile);

  CLI::App* bench = app.add_subcommand("bench", "measure: print tables of where the time goes (run under mpirun)");
  bench->require_subcommand(1);
  std::string bench_config;
  std::vector<std::string> bench_overrides;
  ct::AllReduceBenchOptions allreduce_options;
  CLI::App* bench_allreduce = bench->add_subcommand(
      "allreduce", "the demo model's gradients: raw vs bucketed vs per-parameter all-reduce, and a training step "
                   "with overlap on and off");
  bench_allreduce->add_option("-c,--config", bench_config, "model, batch and runtime settings (default: built-in)")
      ->check(CLI::ExistingFile);
  bench_allreduce->add_option("--set", bench_overrides, "override a config key (repeatable)")->type_name("KEY=VALUE");
  bench_allreduce->add_option("--length", allreduce_options.length, "waveform length")->check(CLI::PositiveNumber);
  bench_allreduce->add_option("--iterations", allreduce_options.iterations, "timed runs of each variant")
      ->check(CLI::PositiveNumber);

  ct::StepBenchOptions step_options;
  CLI::App* bench_step = bench->add_subcommand(
      "step", "the compute-only bound: forward, backward and Adam on training rows in memory, per process (JSON)");
  bench_step->add_option("-c,--config", bench_config, "model, batch and runtime settings (default: built-in)")
      ->check(CLI::ExistingFile);
  bench_step->add_option("--set", bench_overrides, "override a config key (repeatable)")->type_name("KEY=VALUE");
  bench_step->add_option("--steps", step_options.steps, "timed steps")->check(CLI::PositiveNumber);
  bench_step->add_option("--warmup", step_options.warmup, "untimed steps before them")->check(CLI::NonNegativeNumber);

  ct::IoBenchOptions io_options;
  CLI::App* bench_io = bench->add_subcommand(
      "io", "read throughput of data.sharding static and blocks (and the seed layout) against the page cache");
  bench_io->add_option("file", io_options.file, "HDF5 file in the contiguous layout (input, target)")
      ->required()
      ->check(CLI::ExistingFile);
  bench_io->add_option("--seed", io_options.seed_file, "the same rows in the one-group-per-sample layout")
      ->check(CLI::ExistingFile);
  bench_io->add_option("--repeats", io_options.repeats, "rounds; medians are reported")->check(CLI::PositiveNumber);
  bench_io->add_option("--batch", io_options.batch, "rows per batch of the blocks stream")
      ->check(CLI::PositiveNumber);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (!ct::IsLauncherRankZero()) return e.get_exit_code() == 0 ? 0 : ct::kExitUsage;
    const int code = app.exit(e);
    return code == 0 ? 0 : ct::kExitUsage;
  }

  if (*train) {
    if (help_config) {
      if (ct::IsLauncherRankZero()) std::cout << ct::ConfigKeyHelp();
      return 0;
    }
    ct::Config config;
    try {
      config = ct::LoadConfig(config_path, overrides);
      if (print_config) {
        if (ct::IsLauncherRankZero()) std::cout << ct::ConfigToYaml(config);
        return 0;
      }
      ct::CheckInputFiles(config);
    } catch (const ct::Error& e) {
      return ReportEarlyError(e.what(), e.ExitCode());
    }
    // Before MPI and before any OpenMP thread exists; returns unless it re-executes.
    if (config.runtime.bind == "auto") ct::ReexecWithoutOpenMpAffinity(argv);
    return RunWithMpi(argc, argv, [&](const ct::MpiWorld& world) { ct::RunTraining(config, world, resume); });
  }
  if (*make_data) {
    if (const std::string problem = OutputFileProblem(make.out, make.force, ""); !problem.empty()) {
      return ReportEarlyError(problem, ct::kExitUsage);
    }
    return RunWithMpi(argc, argv, [&](const ct::MpiWorld& world) {
      ct::WriteChirpDataset(make.out, make.samples, make.chirp, world.Comm());
      if (world.Rank() == 0) {
        spdlog::info("wrote {}: {} rows of length {} (noise {}, seed {}) from {} ranks", make.out, make.samples,
                     make.chirp.length, make.chirp.noise_std, make.chirp.seed, world.Size());
      }
    });
  }
  if (*predict) {
    if (const std::string problem = OutputFileProblem(predict_options.out, predict_force, ""); !problem.empty()) {
      return ReportEarlyError(problem, ct::kExitUsage);
    }
    return RunWithMpi(argc, argv, [&](const ct::MpiWorld& world) { ct::RunPredict(predict_options, world); });
  }
  if (*convert) {
    const bool exists = std::filesystem::exists(convert_options.out_path);
    if (convert_options.verify_only && !exists) {
      return ReportEarlyError("--verify-only: '" + convert_options.out_path + "' does not exist", ct::kExitUsage);
    }
    if (!convert_options.verify_only) {
      const std::string problem = OutputFileProblem(convert_options.out_path, convert_force,
                                                    ", or --verify-only to check it against the seed file");
      if (!problem.empty()) return ReportEarlyError(problem, ct::kExitUsage);
    }
    return RunWithMpi(argc, argv, [&](const ct::MpiWorld& world) {
      ct::ConvertSeedLayout(convert_options, world);
    });
  }
  if (*bench_io) {
    return RunWithMpi(argc, argv, [&](const ct::MpiWorld& world) { ct::RunIoBench(io_options, world); });
  }
  if (*bench_allreduce || *bench_step) {
    ct::Config config;
    try {
      config = ct::LoadConfig(bench_config, bench_overrides);
      if (*bench_step) ct::CheckInputFiles(config);  // it reads the training file
    } catch (const ct::Error& e) {
      return ReportEarlyError(e.what(), e.ExitCode());
    }
    if (config.runtime.bind == "auto") ct::ReexecWithoutOpenMpAffinity(argv);
    return RunWithMpi(argc, argv, [&](const ct::MpiWorld& world) {
      if (*bench_allreduce) ct::RunAllReduceBench(config, world, allreduce_options);
      if (*bench_step) ct::RunStepBench(config, world, step_options);
    });
  }
  if (*info) {
    try {
      std::cout << ct::DescribeH5File(info_path);
      return 0;
    } catch (const ct::Error& e) {
      return ReportEarlyError(e.what(), e.ExitCode());
    }
  }
  return 0;
}
