// clustertrain convert: the seed's one-group-per-sample layout to the contiguous layout
// (src/data/seed_converter.h).
#include <filesystem>
#include <memory>

#include "cmd/command.h"
#include "data/seed_converter.h"
#include "util/error.h"

namespace ct {
namespace {

struct ConvertArgs {
  ConvertOptions options;
  bool force = false;
};

int RunConvertCommand(const ConvertArgs& args, int argc, char** argv) {
  const ConvertOptions& o = args.options;
  if (o.verify_only && !std::filesystem::exists(o.out_path)) {
    return ReportEarlyError("--verify-only: '" + o.out_path + "' does not exist", kExitUsage);
  }
  if (!o.verify_only) {
    const std::string problem = OutputFileProblem(
        o.out_path, args.force, ", or --verify-only to check it against the seed file", {o.seed_path});
    if (!problem.empty()) return ReportEarlyError(problem, kExitUsage);
  }
  return RunWithMpi(argc, argv, [&](const MpiWorld& world) { ConvertSeedLayout(o, world); });
}

}  // namespace

Command AddConvertCommand(CLI::App& app) {
  auto args = std::make_shared<ConvertArgs>();
  ConvertOptions& o = args->options;
  CLI::App* cli = app.add_subcommand(
      "convert",
      "convert a one-group-per-sample HDF5 file (sample0/input, sample0/target, ...) to the contiguous layout "
      "training reads (input [N, ...], target [N, ...], float32, chunked by rows); runs on any number of ranks");
  cli->add_option("seed", o.seed_path, "HDF5 file in the one-group-per-sample layout")
      ->required()
      ->check(RegularFile());
  cli->add_option("out", o.out_path, "output HDF5 file")->required();
  cli->add_flag("--verify", o.verify,
                "after writing, read the output back and compare every sample with the seed file");
  cli->add_flag("--verify-only", o.verify_only, "compare an existing output with the seed file; write nothing");
  cli->add_flag("-f,--force", args->force, "overwrite an existing output file");
  cli->add_flag("!--no-progress", o.progress, "no progress lines");
  return {cli, [args](int argc, char** argv) { return RunConvertCommand(*args, argc, argv); }};
}

}  // namespace ct
