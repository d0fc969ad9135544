#!/usr/bin/env bash
# Scaling study: trains the config at world sizes 1, 2, 4, ... up to the allocation, weak
# (fixed batch per rank) and strong (fixed global batch), a few epochs each, and collects one
# table (results.csv, results.json), then renders it (bench/scaling_report.py: results.md and
# scaling.png, with a ring all-reduce model extrapolated to 4,096 GPUs).
#
#   bench/scaling.sh [--max-ranks N] [--epochs E] [--config FILE] [--out DIR] [-- train args]
#
# Under Slurm (inside an allocation: sbatch slurm/scaling.sbatch, or salloc) each run is an
# `srun --mpi=pmix --cpu-bind=none -n W` step and N defaults to SLURM_NTASKS; elsewhere
# `mpirun -np W --bind-to none` and N defaults to the node's cores.
set -euo pipefail
cd "$(dirname "$0")/.."
MAX=${SLURM_NTASKS:-$(nproc)}
EPOCHS=3
CONFIG=configs/gw_vae.yaml
OUT=bench/results/scaling
EXTRA=()
while (( $# )); do
  case $1 in
    --max-ranks) MAX=$2; shift 2 ;;
    --epochs) EPOCHS=$2; shift 2 ;;
    --config) CONFIG=$2; shift 2 ;;
    --out) OUT=$2; shift 2 ;;
    --) shift; EXTRA=("$@"); break ;;
    *) echo "scaling.sh: unknown argument '$1' (see the header of $0)" >&2; exit 2 ;;
  esac
done
(( EPOCHS >= 2 )) || { echo "scaling.sh: --epochs must be at least 2 (the first epoch is warm-up)" >&2; exit 2; }
BIN=${CT_BIN:-build/clustertrain}
[[ -x "$BIN" ]] || { echo "scaling.sh: $BIN not found; run launch/setup.sh" >&2; exit 2; }
source launch/mpi_env.sh
if [[ "$CONFIG" == configs/gw_vae.yaml ]]; then launch/demo_data.sh >/dev/null; fi

launch() {  # launch W ARGS...: W ranks of clustertrain
  local w=$1
  shift
  if [[ -n "${SLURM_JOB_ID:-}" ]]; then
    srun --mpi=pmix --cpu-bind=none --kill-on-bad-exit=1 -n "$w" "$BIN" "$@"
  else
    mpirun -np "$w" $(mpi_flags_for "$w") "$BIN" "$@"
  fi
}

# The config's batch per rank; the strong-scaling global batch is that times the largest world.
BATCH=$("$BIN" train --config "$CONFIG" "${EXTRA[@]}" --print-config | sed -n 's/^  batch_size: \([0-9]*\)$/\1/p')
[[ -n "$BATCH" ]] || { echo "scaling.sh: no train.batch_size in the resolved config" >&2; exit 2; }
sizes=()
for (( w = 1; w <= MAX; w *= 2 )); do sizes+=("$w"); done
GLOBAL=$(( BATCH * sizes[-1] ))
mkdir -p "$OUT/runs"
echo "scaling: world sizes ${sizes[*]}; weak: batch $BATCH per rank; strong: global batch $GLOBAL; $EPOCHS epochs each" >&2
for w in "${sizes[@]}"; do
  for mode in weak strong; do
    per_rank=$BATCH
    [[ $mode == strong ]] && per_rank=$(( GLOBAL / w ))
    dir="$OUT/runs/$mode-w$w"
    rm -rf "$dir"
    echo "scaling: $mode, $w rank(s), batch $per_rank per rank" >&2
    launch "$w" train --config "$CONFIG" "${EXTRA[@]}" --set output.dir="$dir" --set train.epochs="$EPOCHS" \
      --set train.batch_size="$per_rank" --set output.checkpoint_every=0 --set output.log_every=0 \
      --set train.early_stop_patience=0 >"$dir.log" 2>&1 || { tail -5 "$dir.log" >&2; exit 1; }
  done
done
# A python3 with matplotlib draws the plot (Debian's: apt-get install python3-matplotlib).
PY=python3
for candidate in python3 /usr/bin/python3; do
  if "$candidate" -c "import matplotlib" 2>/dev/null; then PY=$candidate; break; fi
done
"$PY" bench/scaling_report.py collect "$OUT"
"$PY" bench/scaling_report.py render "$OUT"
