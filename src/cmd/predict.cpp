// clustertrain predict: a trained model's reconstructions and latent means (src/train/predict.h).
#include <memory>

#include "cmd/command.h"
#include "train/predict.h"
#include "util/error.h"

namespace ct {
namespace {

struct PredictArgs {
  PredictOptions options;
  bool force = false;
};

int RunPredictCommand(const PredictArgs& args, int argc, char** argv) {
  if (const std::string problem =
          OutputFileProblem(args.options.out, args.force, "", {args.options.data, args.options.checkpoint});
      !problem.empty()) {
    return ReportEarlyError(problem, kExitUsage);
  }
  return RunWithMpi(argc, argv, [&](const MpiWorld& world) { RunPredict(args.options, world); });
}

}  // namespace

Command AddPredictCommand(CLI::App& app) {
  auto args = std::make_shared<PredictArgs>();
  PredictOptions& o = args->options;
  CLI::App* cli = app.add_subcommand(
      "predict",
      "write a trained model's outputs for every row of an HDF5 file to a new HDF5 file, in parallel (a VAE: "
      "recon, mu, logvar; a model of the dict contract: its batched entries)");
  cli->add_option("--checkpoint", o.checkpoint,
                  "checkpoint written by train (output.dir/checkpoints/best.pt or epoch-NNNNNN.pt; its config rebuilds "
                  "the model), or a run's weights (output.dir/best.pt or model.pt, with the run's config.yaml beside "
                  "them)")
      ->required()
      ->check(RegularFile());
  cli->add_option(
         "--data", o.data,
         "HDF5 file with the rows: the datasets of the checkpoint's data.fields (a VAE's target may be absent)")
      ->required()
      ->check(RegularFile());
  cli->add_option("--out", o.out,
                  "output HDF5 file: one dataset per output, e.g. recon [N, ...], mu and logvar [N, latent]")
      ->required();
  cli->add_option("--set", o.overrides,
                  "override a key of the checkpoint's config, e.g. train.device=cpu or data.input_key=strain")
      ->type_name("KEY=VALUE");
  cli->add_option("--batch", o.batch, "rows per forward pass")->check(AtLeastOne());
  cli->add_flag("-f,--force", args->force, "overwrite an existing output file");
  return {cli, [args](int argc, char** argv) { return RunPredictCommand(*args, argc, argv); }};
}

}  // namespace ct
