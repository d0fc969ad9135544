#!/usr/bin/env bash
# README command 1: set up, write the demo dataset, train the waveform VAE on 2 ranks.
#   launch/quickstart.sh [--set key=value ...]      (extra arguments go to `train`)
# Environment: CT_RANKS (default 2).
set -euo pipefail
cd "$(dirname "$0")/.."
launch/setup.sh
source launch/mpi_env.sh
RANKS=${CT_RANKS:-2}
FLAGS=$(mpi_flags_for "$RANKS")

launch/demo_data.sh "$RANKS"

CMD=(mpirun -np "$RANKS" $FLAGS build/clustertrain train --config configs/gw_vae.yaml "$@")
echo "+ ${CMD[*]}"
start=$(date +%s)
"${CMD[@]}"
echo "quickstart: training took $(( $(date +%s) - start )) s; results in runs/gw_vae/"
