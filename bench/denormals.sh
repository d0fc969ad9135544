#!/usr/bin/env bash
# Subnormal floats and the CPU step, as a table in bench/results/denormals.md: the demo training
# (configs/gw_vae.yaml, 20 epochs, 2 ranks) with runtime.flush_denormal true and false,
# interleaved, REPEATS runs each. Samples/s are the median over epochs 1-9 and over epochs
# 11-20 of each run (the demo's tiny values appear around epoch 10), then the median over runs;
# the final losses show what flushing changes.
#   bench/denormals.sh [REPEATS]          (default 3; about 3 minutes on 2 cores)
set -euo pipefail
cd "$(dirname "$0")/.."
REPEATS=${1:-3}
source bench/common.sh
OUT=bench/results/denormals.md

run() {  # run SETTING N: one demo training; "early late final_train final_val"
  local dir="$WORK/$1-$2"
  mpirun -np 2 $(mpi_flags_for 2) build/clustertrain train --config configs/gw_vae.yaml \
    --set runtime.flush_denormal="$1" --set output.dir="$dir" >/dev/null 2>&1
  PYTHONPATH=tests/e2e python3 - "$dir" <<'PYEOF'
import statistics, sys
import runs
rows = runs.records(sys.argv[1])
early = statistics.median(r["samples_per_s"] for r in rows if r["epoch"] < 10)
late = statistics.median(r["samples_per_s"] for r in rows if r["epoch"] > 10)
print(f"{early:.0f} {late:.0f} {rows[-1]['train_loss']:.6g} {rows[-1]['val_loss']:.6g}")
PYEOF
}
for n in $(seq "$REPEATS"); do
  for setting in true false; do
    echo "bench: flush_denormal=$setting run $n/$REPEATS" >&2
    run "$setting" "$n" >>"$WORK/$setting.txt"
  done
done
{
  echo "# Subnormal floats and the CPU step"
  echo
  echo "Machine: $(nproc) cores ($(lscpu | sed -n 's/^Model name: *//p')); LibTorch $(dpkg-query -W -f='${Version}' libtorch-dev 2>/dev/null || echo '?'); $(date -u +%F)."
  echo "\`bench/denormals.sh $REPEATS\`: the demo training (2 ranks, 20 epochs), $REPEATS interleaved runs per setting; samples/s"
  echo "are medians over the epochs named, then over runs."
  echo
  echo "| runtime.flush_denormal | samples/s, epochs 1-9 | samples/s, epochs 11-20 | final train loss | final val loss |"
  echo "|---|---:|---:|---:|---:|"
  for setting in true false; do
    col() { cut -d' ' -f"$1" "$WORK/$setting.txt" | median; }
    echo "| $setting | $(col 1) | $(col 2) | $(cut -d' ' -f3 "$WORK/$setting.txt" | head -1) | $(cut -d' ' -f4 "$WORK/$setting.txt" | head -1) |"
  done
} >"$OUT"
cat "$OUT"
