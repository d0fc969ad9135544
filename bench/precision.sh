#!/usr/bin/env bash
# Mixed precision on this machine, as a table in bench/results/precision.md: demo training
# throughput on 2 ranks for vae_mlp and vae_conv1d with train.precision fp32 | bf16 and
# runtime.allreduce_precision fp32 | bf16, interleaved, REPEATS runs each, median of epochs 2-3
# of each run, then the median over runs; and the final validation loss of each.
#   bench/precision.sh [REPEATS]          (default 3; 5 to 13 minutes on 2 cores)
set -euo pipefail
cd "$(dirname "$0")/.."
REPEATS=${1:-3}
source bench/common.sh
OUT=bench/results/precision.md
MODELS=("vae_mlp|" "vae_conv1d|--set model.kind=vae_conv1d")
VARIANTS=("fp32|fp32" "bf16|fp32" "fp32|bf16" "bf16|bf16")
for run in $(seq "$REPEATS"); do
  for m in "${!MODELS[@]}"; do
    IFS='|' read -r model model_flags <<<"${MODELS[$m]}"
    for v in "${!VARIANTS[@]}"; do
      IFS='|' read -r precision wire <<<"${VARIANTS[$v]}"
      echo "bench: run $run/$REPEATS, $model, precision $precision, all-reduce $wire" >&2
      mpirun -n 2 $(mpi_flags_for 2) build/clustertrain train --config configs/gw_vae.yaml $model_flags \
        --set train.precision=$precision --set runtime.allreduce_precision=$wire --set train.epochs=3 \
        --set output.checkpoint_every=0 --set output.log_every=0 --set output.dir="$WORK/r$run-m$m-v$v" >/dev/null 2>&1
    done
  done
done
field() { grep -o "\"$2\":[0-9.e-]*" "$1/metrics.jsonl" | tail -"$3" | cut -d: -f2; }
{
  echo "# Mixed precision"
  echo
  echo "Machine: $(nproc) cores ($(lscpu | sed -n 's/^Model name: *//p')), flags with bf16: $(grep -o -w -E 'avx512_bf16|amx_bf16' /proc/cpuinfo | sort -u | tr '\n' ' ' || true); $(date -u +%F)."
  echo "\`mpirun -n 2 build/clustertrain train --config configs/gw_vae.yaml --set train.precision=P --set runtime.allreduce_precision=A --set train.epochs=3\`,"
  echo "$REPEATS runs each, interleaved; samples/s is the median over runs of each run's median of epochs 2-3."
  echo
  echo "| model | train.precision | runtime.allreduce_precision | samples/s | vs fp32/fp32 | val loss after 3 epochs |"
  echo "|---|---|---|---:|---:|---:|"
  for m in "${!MODELS[@]}"; do
    IFS='|' read -r model _ <<<"${MODELS[$m]}"
    base=""
    for v in "${!VARIANTS[@]}"; do
      IFS='|' read -r precision wire <<<"${VARIANTS[$v]}"
      rate=$(for run in $(seq "$REPEATS"); do field "$WORK/r$run-m$m-v$v" samples_per_s 2 | median; done | median)
      loss=$(for run in $(seq "$REPEATS"); do field "$WORK/r$run-m$m-v$v" val_loss 1; done | median)
      [[ -n "$base" ]] || base=$rate
      printf "| %s | %s | %s | %.0f | %.2f | %.5f |\n" "$model" "$precision" "$wire" "$rate" \
        "$(awk -v a="$rate" -v b="$base" 'BEGIN {print a / b}')" "$loss"
    done
  done
} >"$OUT"
cat "$OUT"
