#!/usr/bin/env bash
# The cluster runtime's benchmarks, as tables in bench/results/runtime.md:
#   1. `clustertrain bench allreduce` on 2 ranks, run REPEATS times: the demo model's gradients
#      all-reduced raw / bucketed / per parameter, and a training step with overlap on and off;
#   2. demo training throughput at 1 and 2 ranks under four placements, interleaved, REPEATS
#      runs each, median of epochs 2-3 of each run, then the median over runs.
#   bench/runtime.sh [REPEATS]          (default 3; about 13 minutes on 2 cores)
set -euo pipefail
cd "$(dirname "$0")/.."
REPEATS=${1:-3}
source bench/common.sh
OUT=bench/results/runtime.md

{
  echo "# Cluster runtime benchmarks"
  echo
  echo "Machine: $(nproc) cores ($(lscpu | sed -n 's/^Model name: *//p')), $(uname -r); LibTorch $(dpkg-query -W -f='${Version}' libtorch-dev 2>/dev/null || echo '?');" \
       "BLAS: $(readlink -f /etc/alternatives/libblas.so.3-x86_64-linux-gnu 2>/dev/null || echo '?'); $(date -u +%F)."
  echo
  echo "## Gradient all-reduce (\`mpirun -n 2 --bind-to none build/clustertrain bench allreduce -c configs/gw_vae.yaml\`)"
} >"$OUT"
allreduce() {  # allreduce [--set ...]: one run, its header line and tables
  mpirun -n 2 $(mpi_flags_for 2) build/clustertrain bench allreduce -c configs/gw_vae.yaml --iterations 50 "$@" \
    2>&1 | grep -E '^\||^$|bench allreduce' >>"$OUT"
}
for run in $(seq "$REPEATS"); do
  echo "bench: allreduce run $run/$REPEATS" >&2
  { echo; echo "### Run $run"; echo; } >>"$OUT"
  allreduce
done
{
  echo
  echo "### A deeper model: 12 hidden layers of 256 (52 parameter tensors)"
  echo
} >>"$OUT"
allreduce --set "model.hidden=[256,256,256,256,256,256,256,256,256,256,256,256]"

# Placements: NAME|MPIRUN FLAGS|TRAIN FLAGS
PLACEMENTS=(
  "bind auto (clustertrain binds itself)|--bind-to none|--set runtime.bind=auto"
  "bind none (no binding, threads = share of the node)|--bind-to none|--set runtime.bind=none"
  "mpirun's default binding (--bind-to core), bind auto|--bind-to core|--set runtime.bind=auto"
  "one thread per rank (LibTorch's default here)|--bind-to none|--set runtime.threads=1"
)
for run in $(seq "$REPEATS"); do
  for ranks in 1 2; do
    for i in "${!PLACEMENTS[@]}"; do
      IFS='|' read -r name mpi_flags train_flags <<<"${PLACEMENTS[$i]}"
      echo "bench: placement run $run/$REPEATS, $ranks rank(s), $name" >&2
      dir="$WORK/r$run-n$ranks-p$i"
      mpirun -n "$ranks" $mpi_flags build/clustertrain train --config configs/gw_vae.yaml \
        --set output.dir="$dir" --set train.epochs=3 --set output.checkpoint_every=0 --set output.log_every=0 \
        $train_flags >"$dir.txt" 2>&1
      grep -o '"samples_per_s":[0-9.]*' "$dir/metrics.jsonl" | tail -2 | cut -d: -f2 >"$dir.rates"
      grep -o "threads [0-9]*" "$dir.txt" | head -1 | cut -d' ' -f2 >"$dir.threads"
    done
  done
done
{
  echo
  echo "## Demo training throughput by placement"
  echo
  echo "\`mpirun -n R build/clustertrain train --config configs/gw_vae.yaml --set train.epochs=3\`, $REPEATS runs each, interleaved;"
  echo "samples/s is the median over runs of each run's median of epochs 2-3."
  echo
  echo "| ranks | placement | threads per rank | samples/s | vs bind auto |"
  echo "|---:|---|---:|---:|---:|"
} >>"$OUT"
for ranks in 1 2; do
  base=""
  for i in "${!PLACEMENTS[@]}"; do
    IFS='|' read -r name _ _ <<<"${PLACEMENTS[$i]}"
    per_run=$(for run in $(seq "$REPEATS"); do median <"$WORK/r$run-n$ranks-p$i.rates"; done)
    rate=$(echo "$per_run" | median)
    threads=$(cat "$WORK/r1-n$ranks-p$i.threads")
    [[ -n "$base" ]] || base=$rate
    printf "| %d | %s | %s | %.0f | %.2f |\n" "$ranks" "$name" "$threads" "$rate" "$(awk -v a="$rate" -v b="$base" 'BEGIN {print a / b}')" >>"$OUT"
  done
done
cat "$OUT"
