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
# The loss curves as a picture, where Python has matplotlib (Debian: python3-matplotlib).
plotter=""
for py in python3 /usr/bin/python3; do
  "$py" -c "import matplotlib" 2>/dev/null && { plotter=$py; break; }
done
if [[ -n "$plotter" ]]; then
  echo "quickstart: loss curves in $("$plotter" launch/plot_runs.py runs/gw_vae)"
else
  echo "quickstart: for the loss curves as a picture: apt-get install python3-matplotlib; launch/plot_runs.py runs/gw_vae"
fi
echo "quickstart: TensorBoard: pip install tensorboard; tensorboard --logdir runs/"
