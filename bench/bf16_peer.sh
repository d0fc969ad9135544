#!/usr/bin/env bash
# bfloat16 training against PyTorch's, as a table in bench/results/bf16_peer.md: vae_mlp and
# vae_conv1d on the demo data at 1 and 2 ranks, clustertrain with train.precision fp32 and bf16
# (both builds) and the strong PyTorch 2.x peer (bench/peer/ddp_strong.py: rows in memory, fused
# Adam) in float32, under torch.autocast("cpu", bfloat16), and under autocast with torch.compile.
# REPEATS runs each, interleaved; samples/s of each run's last epoch, median over runs. Where the CPU has AMX or
# AVX512-BF16, bfloat16 products run several times faster than float32 ones (oneDNN); elsewhere
# autocast only adds conversions.
#   bench/bf16_peer.sh [REPEATS]          (default 3; about 15 minutes on 2 cores)
set -euo pipefail
cd "$(dirname "$0")/.."
REPEATS=${1:-3}
EPOCHS=2
launch/setup.sh --torch pip >/dev/null
source bench/common.sh
VENV_PY=${CT_TORCH_VENV:-.venv-torch}/bin/python3
"$VENV_PY" -c "import h5py" 2>/dev/null || "$VENV_PY" -m pip install -q h5py numpy
export_openblas_coretype build/clustertrain
OUT=bench/results/bf16_peer.md
MODELS=(vae_mlp vae_conv1d)
STRONG_ENV=(-x MALLOC_MMAP_THRESHOLD_=268435456 -x MALLOC_TRIM_THRESHOLD_=1073741824)  # util/malloc_tuning.h

clustertrain() {  # BUILD MODEL PRECISION RANKS: samples/s of the last epoch; the threads per rank kept
  local dir="$WORK/run-$1-$2-$3-$4"
  rm -rf "$dir"
  mpirun -np "$4" $(mpi_flags_for "$4") "$1/clustertrain" train --config configs/gw_vae.yaml \
    --set model.kind="$2" --set train.precision="$3" --set output.dir="$dir" --set train.epochs=$EPOCHS \
    --set output.checkpoint_every=0 --set output.log_every=0 >"$dir.log" 2>&1
  grep -o "threads [0-9]*" "$dir.log" | head -1 | cut -d' ' -f2 >"$WORK/threads-$4"
  tail -1 "$dir/metrics.jsonl" | grep -o '"samples_per_s":[0-9.]*' | cut -d: -f2
}
peer() {  # MODEL RANKS [--bf16] [--compile]
  local model=$1 ranks=$2
  shift 2
  mpirun -np "$ranks" $(mpi_flags_for "$ranks") -x MASTER_PORT=$((29500 + RANDOM % 2000)) "${STRONG_ENV[@]}" \
    "$VENV_PY" bench/peer/ddp_strong.py --data data/gw_train.h5 --epochs $EPOCHS --model "$model" --fused \
    --threads "$(cat "$WORK/threads-$ranks")" "$@" 2>>"$WORK/peer.err" | tail -1 \
    | grep -o '"samples_per_s": [0-9.]*' | cut -d' ' -f2
}

for run in $(seq "$REPEATS"); do
  for ranks in 1 2; do
    for model in "${MODELS[@]}"; do
      echo "bench: run $run/$REPEATS, $ranks rank(s), $model" >&2
      for build in build build-torch2; do
        for precision in fp32 bf16; do
          clustertrain "$build" "$model" "$precision" "$ranks" >>"$WORK/ct-$build-$model-$precision-$ranks"
        done
      done
      peer "$model" "$ranks" >>"$WORK/peer-$model-fp32-$ranks"
      peer "$model" "$ranks" --bf16 >>"$WORK/peer-$model-bf16-$ranks"
      peer "$model" "$ranks" --bf16 --compile >>"$WORK/peer-$model-bf16compiled-$ranks"
    done
  done
done

m() { median <"$WORK/$1"; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.2f", a / b}'; }
max() { printf "%s\n" "$@" | sort -g | tail -1; }
{
  echo "# bfloat16 training against PyTorch's"
  echo
  echo "Measured by \`bench/bf16_peer.sh $REPEATS\` on $(date -u +%F): $(nproc) cores ($(lscpu | sed -n 's/^Model name: *//p')),"
  echo "bf16 instructions: $(grep -o -w -E 'avx512_bf16|amx_bf16' /proc/cpuinfo | sort -u | paste -sd' ' || true)."
  echo "The demo data, 128 rows per rank, $EPOCHS epochs (samples/s of the last, all ranks), $REPEATS runs each,"
  echo "interleaved, medians. clustertrain: \`train --set train.precision=P\` in build/ (Debian LibTorch"
  echo "1.13) and build-torch2/ (pip LibTorch $("$VENV_PY" -c 'import torch; print(torch.__version__)')). Peer: \`bench/peer/ddp_strong.py --fused\`"
  echo "in that PyTorch, the forward under \`torch.autocast(\"cpu\", dtype=torch.bfloat16)\` for bf16, with"
  echo "\`--compile\` for torch.compile; the same threads per rank."
  echo
  echo "| model | ranks | clustertrain Debian fp32 | clustertrain Debian bf16 | clustertrain pip fp32 | clustertrain pip bf16 | PyTorch 2.x fp32 | PyTorch 2.x bf16 | PyTorch 2.x bf16 + compile | clustertrain bf16 / its fp32 (best build each) | **clustertrain bf16 / best PyTorch bf16** |"
  echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
  for model in "${MODELS[@]}"; do
    for ranks in 1 2; do
      deb32=$(m "ct-build-$model-fp32-$ranks"); deb16=$(m "ct-build-$model-bf16-$ranks")
      pip32=$(m "ct-build-torch2-$model-fp32-$ranks"); pip16=$(m "ct-build-torch2-$model-bf16-$ranks")
      p32=$(m "peer-$model-fp32-$ranks"); p16=$(m "peer-$model-bf16-$ranks"); p16c=$(m "peer-$model-bf16compiled-$ranks")
      ct16=$(max "$deb16" "$pip16")
      printf "| %s | %d | %.0f | %.0f | %.0f | %.0f | %.0f | %.0f | %.0f | %s | **%s** |\n" "$model" "$ranks" "$deb32" \
        "$deb16" "$pip32" "$pip16" "$p32" "$p16" "$p16c" "$(ratio "$ct16" "$(max "$deb32" "$pip32")")" \
        "$(ratio "$ct16" "$(max "$p16" "$p16c")")"
    done
  done
} >"$OUT"
cat "$OUT"
