// `clustertrain train`: the data-parallel training run, from loaded config to model.pt.
#pragma once

#include "cluster/mpi_world.h"
#include "util/config.h"

namespace ct {

// Collective over the world. Throws ct::Error on any failure.
// resume: "" (start fresh), "auto" (the newest checkpoint in output.dir, if any) or a path.
void RunTraining(const Config& config, const MpiWorld& world, const std::string& resume = "");

}  // namespace ct
