// clustertrain make-data: a synthetic gravitational-wave chirp dataset (src/data/synthetic_writer.h).
#include <memory>

#include "cmd/command.h"
#include "data/chirp.h"
#include "data/synthetic_writer.h"
#include "util/atomic_file.h"
#include "util/error.h"
#include "util/logging.h"

namespace ct {
namespace {

struct MakeDataArgs {
  std::string out;
  int64_t samples = 16384;
  bool force = false;
  ChirpOptions chirp;
};

int RunMakeDataCommand(const MakeDataArgs& args, int argc, char** argv) {
  if (const std::string problem = OutputFileProblem(args.out, args.force, ""); !problem.empty()) {
    return ReportEarlyError(problem, kExitUsage);
  }
  // input and target [n, length] and params [n, 5], float32: refused before anything is written.
  const double bytes =
      4.0 * static_cast<double>(args.samples) * static_cast<double>(2 * args.chirp.length + kChirpParams);
  if (const std::string problem = SpaceProblem(args.out, bytes); !problem.empty()) {
    return ReportEarlyError("make-data: " + problem + " (-n, -l)", kExitData);
  }
  return RunWithMpi(argc, argv, [&](const MpiWorld& world) {
    WriteChirpDataset(args.out, args.samples, args.chirp, world.Comm());
    if (world.Rank() == 0) {
      spdlog::info("wrote {}: {} rows of length {} (noise {}, seed {}) from {} ranks", args.out, args.samples,
                   args.chirp.length, args.chirp.noise_std, args.chirp.seed, world.Size());
    }
  });
}

}  // namespace

Command AddMakeDataCommand(CLI::App& app) {
  auto args = std::make_shared<MakeDataArgs>();
  CLI::App* cli = app.add_subcommand(
      "make-data", "write a synthetic gravitational-wave chirp dataset (input: noisy strain, target: clean)");
  cli->add_option("-o,--out", args->out, "output HDF5 file")->required();
  cli->add_option("-n,--samples", args->samples, "number of rows")->check(AtLeastOne());
  cli->add_option("-l,--length", args->chirp.length, "samples per waveform")->check(AtLeastOne());
  cli->add_option("--noise", args->chirp.noise_std, "noise standard deviation")->check(FiniteNonNegative());
  cli->add_option("--seed", args->chirp.seed, "seed; rows depend only on it and their index")->check(WholeNumber());
  cli->add_flag("-f,--force", args->force, "overwrite an existing file");
  return {cli, [args](int argc, char** argv) { return RunMakeDataCommand(*args, argc, argv); }};
}

}  // namespace ct
