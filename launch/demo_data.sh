#!/usr/bin/env bash
# Writes the demo dataset (data/gw_train.h5: 16,384 chirps; data/gw_val.h5: 2,048) unless present.
#   launch/demo_data.sh [RANKS]        (expects build/clustertrain; default 2 ranks)
set -euo pipefail
cd "$(dirname "$0")/.."
source launch/mpi_env.sh
RANKS=${1:-2}
FLAGS=$(mpi_flags_for "$RANKS")
mkdir -p data
if [[ ! -f data/gw_train.h5 ]]; then
  mpirun -np "$RANKS" $FLAGS build/clustertrain make-data --out data/gw_train.h5 --samples 16384 --length 1024 --seed 1
fi
if [[ ! -f data/gw_val.h5 ]]; then
  mpirun -np "$RANKS" $FLAGS build/clustertrain make-data --out data/gw_val.h5 --samples 2048 --length 1024 --seed 2
fi
