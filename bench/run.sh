#!/usr/bin/env bash
# clustertrain against what its users ran before (PyTorch DDP in Python: bench/peer/ddp_vae.py),
# against DDP written well (bench/peer/ddp_strong.py: rows in memory, reshuffled per epoch, no
# DataLoader, no .item() per batch, the same allocator settings as clustertrain's) and against the
# machine's own limits (the compute-only step; sgemm at the same thread count), on the demo data
# at 1 and 2 ranks; every configuration REPEATS times, interleaved; medians. Writes bench/results.md.
#   bench/run.sh [REPEATS]        (default 3; about 12 minutes on 2 cores)
# Both train the same vae_mlp (1024 -> 512 -> 256 -> 2x16 and back), Adam, 128 rows per rank, the
# linear lr rule, 2 epochs; samples/s is the second epoch's. The peer reads with the seeds'
# worker-safe h5py Dataset (one row per item) through a DataLoader and DistributedSampler, best
# of num_workers 0 and 1, with as many threads per rank as clustertrain chose.
set -euo pipefail
cd "$(dirname "$0")/.."
REPEATS=${1:-3}
EPOCHS=2
launch/setup.sh --tests >/dev/null
launch/demo_data.sh >/dev/null
source launch/mpi_env.sh
PY=""
for candidate in python3 /usr/bin/python3; do
  if "$candidate" -c "import torch, h5py" 2>/dev/null; then PY=$candidate; break; fi
done
[[ -n "$PY" ]] || { echo "run.sh: needs a python3 with torch and h5py (apt-get install python3-torch python3-h5py)" >&2; exit 2; }
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
OUT=bench/results.md

# One measurement each; every function prints samples/s for all ranks together.
clustertrain_full() {  # RANKS
  local dir="$WORK/ct-$1"
  rm -rf "$dir"
  mpirun -np "$1" $(mpi_flags_for "$1") build/clustertrain train --config configs/gw_vae.yaml \
    --set output.dir="$dir" --set train.epochs=$EPOCHS --set output.checkpoint_every=0 --set output.log_every=0 \
    >"$dir.log" 2>&1
  grep -o "threads [0-9]*" "$dir.log" | head -1 | cut -d' ' -f2 >"$WORK/threads-$1"
  # Where the epoch went, from the run's own split: data, compute, comm (waiting), the rest.
  tail -1 "$dir/metrics.jsonl" | tr ',' '\n' | awk -F: '
    /"train_seconds"/ {t = $2} /"data_seconds"/ {d = $2} /"compute_seconds"/ {c = $2} /"comm_seconds"/ {m = $2}
    END {printf "%.3f %.3f %.3f %.3f\n", d / t, c / t, m / t, (t - d - c - m) / t}' >>"$WORK/split-$1"
  tail -1 "$dir/metrics.jsonl" | grep -o '"samples_per_s":[0-9.]*' | cut -d: -f2
}
peer_full() {  # RANKS WORKERS
  local threads
  threads=$(cat "$WORK/threads-$1")
  mpirun -np "$1" $(mpi_flags_for "$1") -x MASTER_PORT=$(( 29500 + RANDOM % 2000 )) "$PY" bench/peer/ddp_vae.py \
    --data data/gw_train.h5 --epochs $EPOCHS --threads "$threads" --workers "$2" 2>"$WORK/peer.err" | tail -1 \
    | grep -o '"samples_per_s": [0-9.]*' | cut -d' ' -f2
}
strong_full() {  # RANKS: glibc's allocator set as clustertrain sets it (util/malloc_tuning.h)
  mpirun -np "$1" $(mpi_flags_for "$1") -x MASTER_PORT=$(( 29500 + RANDOM % 2000 )) \
    -x MALLOC_MMAP_THRESHOLD_=268435456 -x MALLOC_TRIM_THRESHOLD_=1073741824 "$PY" bench/peer/ddp_strong.py \
    --data data/gw_train.h5 --epochs $EPOCHS --threads "$(cat "$WORK/threads-$1")" 2>"$WORK/strong.err" | tail -1 \
    | grep -o '"samples_per_s": [0-9.]*' | cut -d' ' -f2
}
clustertrain_compute() {  # RANKS: per-process bound x ranks; the step's phases and GFLOP/s kept
  mpirun -np "$1" $(mpi_flags_for "$1") build/clustertrain bench step --config configs/gw_vae.yaml 2>/dev/null \
    | grep compute_only | tee -a "$WORK/step-json-$1" \
    | grep -o '"compute_only_samples_per_s": [0-9.]*' | awk -v r="$1" '{print $2 * r}'
}
sgemm() {  # THREADS: GFLOP/s of the widest layer's product and of a large square one
  "$PY" bench/sgemm.py --threads "$1" | tee -a "$WORK/sgemm-$1" >/dev/null
}
peer_compute() {  # RANKS: every rank prints its own; summed
  mpirun -np "$1" $(mpi_flags_for "$1") "$PY" bench/peer/ddp_vae.py --compute-only --threads "$(cat "$WORK/threads-$1")" \
    2>/dev/null | grep -o '"compute_only_samples_per_s": [0-9.]*' | awk '{s += $2} END {print s}'
}

for run in $(seq "$REPEATS"); do
  for ranks in 1 2; do
    echo "bench: run $run/$REPEATS, $ranks rank(s)" >&2
    clustertrain_full "$ranks" >>"$WORK/ct-full-$ranks"
    peer_full "$ranks" 0 >>"$WORK/peer-full0-$ranks"
    peer_full "$ranks" 1 >>"$WORK/peer-full1-$ranks"
    strong_full "$ranks" >>"$WORK/strong-full-$ranks"
    clustertrain_compute "$ranks" >>"$WORK/ct-compute-$ranks"
    peer_compute "$ranks" >>"$WORK/peer-compute-$ranks"
    sgemm "$(cat "$WORK/threads-$ranks")"
  done
done

median() { sort -g "$1" | awk '{v[NR]=$1} END {print (NR%2 ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2)}'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.2f", a / b}'; }
{
  echo "# clustertrain against PyTorch DDP and the compute-only bound"
  echo
  echo "Measured by \`bench/run.sh $REPEATS\` on $(date -u +%F): $(nproc) cores ($(lscpu | sed -n 's/^Model name: *//p')), " \
       "BLAS $(readlink -f /etc/alternatives/libblas.so.3-x86_64-linux-gnu 2>/dev/null || echo '?'), " \
       "LibTorch $(dpkg-query -W -f='${Version}' libtorch-dev 2>/dev/null || echo '?'), " \
       "Python torch $("$PY" -c 'import torch; print(torch.__version__)'). Demo data (16,384 x 1024 float32), vae_mlp, " \
       "Adam, 128 rows per rank, $EPOCHS epochs (samples/s of the last), $REPEATS runs each, interleaved, medians."
  echo
  echo "| ranks | threads/rank | clustertrain samples/s | strong DDP peer | clustertrain / strong | seeds' DDP, workers 0 | seeds' DDP, workers 1 | clustertrain / seeds' best | C++ compute-only | clustertrain pipeline efficiency | Python compute-only |"
  echo "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
  for ranks in 1 2; do
    ct=$(median "$WORK/ct-full-$ranks")
    st=$(median "$WORK/strong-full-$ranks")
    p0=$(median "$WORK/peer-full0-$ranks")
    p1=$(median "$WORK/peer-full1-$ranks")
    best=$(awk -v a="$p0" -v b="$p1" 'BEGIN {print (a > b ? a : b)}')
    cc=$(median "$WORK/ct-compute-$ranks")
    pc=$(median "$WORK/peer-compute-$ranks")
    printf "| %d | %s | %.0f | %.0f | %s | %.0f | %.0f | %s | %.0f | %s | %.0f |\n" "$ranks" "$(cat "$WORK/threads-$ranks")" \
      "$ct" "$st" "$(ratio "$ct" "$st")" "$p0" "$p1" "$(ratio "$ct" "$best")" "$cc" "$(ratio "$ct" "$cc")" "$pc"
  done
  echo
  echo "Pipeline efficiency: full training samples/s over the compute-only step's (all ranks). Targets"
  echo "(issue 19): clustertrain at least 1.5x the strong peer at 1 and 2 ranks, pipeline efficiency at"
  echo "least 0.95 at 1 rank and 0.9 at 2."
  echo
  echo "The distance to the machine's limit: the compute-only step's arithmetic rate (6 FLOP per matrix"
  echo "weight and sample, per process) next to sgemm through the same BLAS at the same thread count,"
  echo "for the widest layer's product (128x1024 by 1024x512) and a 2048-cube; and where a step's time"
  echo "goes (medians of per-phase times in \`clustertrain bench step\`)."
  echo
  echo "| ranks | threads/rank | step GFLOP/s | sgemm GFLOP/s, layer shape | sgemm GFLOP/s, 2048^3 | step / sgemm (layer) | forward ms | backward ms | Adam ms |"
  echo "|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
  for ranks in 1 2; do
    threads=$(cat "$WORK/threads-$ranks")
    field() { grep -o "\"$2\": [0-9.]*" "$1" | cut -d' ' -f2 >"$WORK/column"; median "$WORK/column"; }
    sg=$(field "$WORK/sgemm-$threads" layer_gflops)
    printf "| %d | %s | %.1f | %.1f | %.1f | %s | %.2f | %.2f | %.2f |\n" "$ranks" "$threads" \
      "$(field "$WORK/step-json-$ranks" matrix_gflops)" "$sg" "$(field "$WORK/sgemm-$threads" square_gflops)" \
      "$(ratio "$(field "$WORK/step-json-$ranks" matrix_gflops)" "$sg")" "$(field "$WORK/step-json-$ranks" forward_ms)" \
      "$(field "$WORK/step-json-$ranks" backward_ms)" "$(field "$WORK/step-json-$ranks" optimizer_ms)"
  done
  echo
  echo "Where clustertrain's training time goes, from each run's own split in metrics.jsonl (median shares"
  echo "of train_seconds): building batches, forward/backward/Adam (with overlap this includes the all-reduce"
  echo "running beside backward), waiting for the all-reduce after backward, and the rest (per-step host work:"
  echo "the preemption flag's all-reduce, seeding, loss bookkeeping)."
  echo
  echo "| ranks | data | compute | comm wait | rest |"
  echo "|---:|---:|---:|---:|---:|"
  for ranks in 1 2; do
    printf "| %d |" "$ranks"
    for column in 1 2 3 4; do
      cut -d' ' -f"$column" "$WORK/split-$ranks" >"$WORK/column"
      printf " %.3f |" "$(median "$WORK/column")"
    done
    echo
  done
} >"$OUT"
cat "$OUT"
