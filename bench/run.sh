#!/usr/bin/env bash
# clustertrain against the PyTorch a skilled user would run, and against the machine's limits, on
# the demo data at 1 and 2 ranks; every configuration REPEATS times, interleaved; medians. Writes
# bench/results.md.
#   bench/run.sh [REPEATS]        (default 3; about 20 minutes on 2 cores)
# Two clustertrain builds: Debian's LibTorch 1.13 (OpenBLAS) in build/ and pip's LibTorch 2.x
# (its bundled MKL) in build-torch2/ (both made here by launch/setup.sh). The peers, all under
# the same mpirun with as many threads per rank as clustertrain chose:
#   - seeds' DDP (bench/peer/ddp_vae.py): what the users ran; h5py rows through a DataLoader
#     (best of 0 and 1 workers), PyTorch 1.13;
#   - strong DDP (bench/peer/ddp_strong.py): rows in memory, no DataLoader, no .item() per
#     batch, clustertrain's allocator settings; in PyTorch 1.13, in PyTorch 2.x with the fused
#     Adam kernel, and in 2.x with fused Adam and torch.compile (.venv-torch).
# Models: vae_mlp (1024 -> 512 -> 256 -> 2x16 and back) and vae_conv1d (channels 16 32 64, kernel
# 7, stride 2), Adam, 128 rows per rank, the linear lr rule, 2 epochs; samples/s is the second
# epoch's (torch.compile compiles in the first).
# The limits: the compute-only step (`clustertrain bench step`: forward, backward, Adam on rows
# in memory) with its phases, against the same step's matrix products alone through the same
# BLAS (bench/sgemm.py) and a 2048-cube sgemm.
set -euo pipefail
cd "$(dirname "$0")/.."
REPEATS=${1:-3}
EPOCHS=2
launch/setup.sh --tests >/dev/null
launch/setup.sh --torch pip >/dev/null
launch/demo_data.sh >/dev/null
source launch/mpi_env.sh
PY=/usr/bin/python3   # Debian's python3-torch (1.13), the Debian build's LibTorch and OpenBLAS
VENV_PY=${CT_TORCH_VENV:-.venv-torch}/bin/python3
"$PY" -c "import torch, h5py" 2>/dev/null \
  || { echo "run.sh: $PY needs torch and h5py (apt-get install python3-torch python3-h5py)" >&2; exit 2; }
"$VENV_PY" -c "import h5py" 2>/dev/null || "$VENV_PY" -m pip install -q h5py numpy
# OpenBLAS on a CPU it does not know: clustertrain restarts itself with the kernel for the CPU
# (cluster/openblas_kernel.h). The peers' PyTorch 1.13 and bench/sgemm.py load the same OpenBLAS,
# so they get that kernel too: the comparison is of the code, not of OpenBLAS's CPU detection.
export_openblas_coretype build/clustertrain
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
OUT=bench/results.md
BUILDS=(build build-torch2)
MODELS=(vae_mlp vae_conv1d)
STRONG_ENV=(-x MALLOC_MMAP_THRESHOLD_=268435456 -x MALLOC_TRIM_THRESHOLD_=1073741824)  # util/malloc_tuning.h

# One measurement each; every function prints samples/s for all ranks together.
clustertrain_full() {  # BUILD MODEL RANKS
  local dir="$WORK/ct-$1-$2-$3"
  rm -rf "$dir"
  mpirun -np "$3" $(mpi_flags_for "$3") "$1/clustertrain" train --config configs/gw_vae.yaml \
    --set model.kind="$2" --set output.dir="$dir" --set train.epochs=$EPOCHS --set output.checkpoint_every=0 \
    --set output.log_every=0 >"$dir.log" 2>&1
  grep -o "threads [0-9]*" "$dir.log" | head -1 | cut -d' ' -f2 >"$WORK/threads-$3"
  if [[ "$1" == build && "$2" == vae_mlp ]]; then  # where the epoch went, from the run's own split
    tail -1 "$dir/metrics.jsonl" | tr ',' '\n' | awk -F: '
      /"train_seconds"/ {t = $2} /"data_seconds"/ {d = $2} /"compute_seconds"/ {c = $2} /"comm_seconds"/ {m = $2}
      END {printf "%.3f %.3f %.3f %.3f\n", d / t, c / t, m / t, (t - d - c - m) / t}' >>"$WORK/split-$3"
  fi
  tail -1 "$dir/metrics.jsonl" | grep -o '"samples_per_s":[0-9.]*' | cut -d: -f2
}
seeds_full() {  # RANKS WORKERS
  mpirun -np "$1" $(mpi_flags_for "$1") -x MASTER_PORT=$(( 29500 + RANDOM % 2000 )) "$PY" bench/peer/ddp_vae.py \
    --data data/gw_train.h5 --epochs $EPOCHS --threads "$(cat "$WORK/threads-$1")" --workers "$2" \
    2>>"$WORK/peer.err" | tail -1 | grep -o '"samples_per_s": [0-9.]*' | cut -d' ' -f2
}
strong_full() {  # PYTHON MODEL RANKS [--fused] [--compile]
  local python=$1 model=$2 ranks=$3
  shift 3
  mpirun -np "$ranks" $(mpi_flags_for "$ranks") -x MASTER_PORT=$(( 29500 + RANDOM % 2000 )) "${STRONG_ENV[@]}" \
    "$python" bench/peer/ddp_strong.py --data data/gw_train.h5 --epochs $EPOCHS --model "$model" \
    --threads "$(cat "$WORK/threads-$ranks")" "$@" 2>>"$WORK/strong.err" | tail -1 \
    | grep -o '"samples_per_s": [0-9.]*' | cut -d' ' -f2
}
clustertrain_compute() {  # BUILD MODEL RANKS: per-process bound x ranks; the JSON kept for the phases
  mpirun -np "$3" $(mpi_flags_for "$3") "$1/clustertrain" bench step --config configs/gw_vae.yaml \
    --set model.kind="$2" --steps $([[ "$2" == vae_mlp ]] && echo 200 || echo 30) 2>/dev/null \
    | grep compute_only | tee -a "$WORK/step-$1-$2-$3" \
    | grep -o '"compute_only_samples_per_s": [0-9.]*' | awk -v r="$3" '{print $2 * r}'
}
sgemm() {  # PYTHON BUILD RANKS: the step's products alone and the square sgemm through that BLAS, in
  # as many processes at once as the step runs ranks (they share the caches and memory as the ranks do);
  # one line per run in products-BUILD-RANKS: the processes' mean products_ms
  mpirun -np "$3" $(mpi_flags_for "$3") "$1" bench/sgemm.py --threads "$(cat "$WORK/threads-$3")" 2>/dev/null \
    | tee -a "$WORK/sgemm-$2-$3" | grep -o '"products_ms": [0-9.]*' \
    | awk '{sum += $2} END {print sum / NR}' >>"$WORK/products-$2-$3"
}
declare -A PYTHON_OF=([build]="$PY" [build-torch2]="$VENV_PY")  # the Python whose torch has the build's BLAS

for run in $(seq "$REPEATS"); do
  for ranks in 1 2; do
    echo "bench: run $run/$REPEATS, $ranks rank(s)" >&2
    for model in "${MODELS[@]}"; do
      for build in "${BUILDS[@]}"; do
        clustertrain_full "$build" "$model" "$ranks" >>"$WORK/full-$build-$model-$ranks"
        clustertrain_compute "$build" "$model" "$ranks" >>"$WORK/compute-$build-$model-$ranks"
        # Right after the step, so that their ratio compares the two within seconds (the VM's
        # speed drifts by 10-15% over the minutes a run takes).
        if [[ $model == vae_mlp ]]; then sgemm "${PYTHON_OF[$build]}" "$build" "$ranks"; fi
      done
      strong_full "$PY" "$model" "$ranks" >>"$WORK/full-strong113-$model-$ranks"
      strong_full "$VENV_PY" "$model" "$ranks" --fused >>"$WORK/full-fused-$model-$ranks"
      strong_full "$VENV_PY" "$model" "$ranks" --fused --compile >>"$WORK/full-compiled-$model-$ranks"
    done
    seeds_full "$ranks" 0 >>"$WORK/full-seeds0-vae_mlp-$ranks"
    seeds_full "$ranks" 1 >>"$WORK/full-seeds1-vae_mlp-$ranks"
  done
done

median() { sort -g "$1" | awk '{v[NR]=$1} END {print (NR%2 ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2)}'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.2f", a / b}'; }
max() { printf "%s\n" "$@" | sort -g | tail -1; }
column() { grep -o "\"$2\": [0-9.]*" "$1" | cut -d' ' -f2; }  # FILE KEY: the key's number on every line
field() { column "$1" "$2" >"$WORK/column"; median "$WORK/column"; }
m() { median "$WORK/$1"; }
# paired_ratio A B: the median over runs of A's line over B's (two files, one number a line per run).
paired_ratio() { paste "$1" "$2" | awk '{printf "%.6f\n", $1 / $2}' >"$WORK/ratios"; printf "%.2f" "$(median "$WORK/ratios")"; }
version_of() { "$1" -c 'import torch; print(torch.__version__)' 2>/dev/null; }
{
  echo "# clustertrain against PyTorch and against the machine's limits"
  echo
  echo "Measured by \`bench/run.sh $REPEATS\` on $(date -u +%F): $(nproc) cores ($(lscpu | sed -n 's/^Model name: *//p')). "
  echo "clustertrain: build/ (Debian LibTorch $(dpkg-query -W -f='${Version}' libtorch-dev 2>/dev/null || echo '?'), BLAS"
  echo "$(readlink -f /etc/alternatives/libblas.so.3-x86_64-linux-gnu 2>/dev/null || echo '?')${OPENBLAS_CORETYPE:+, OPENBLAS_CORETYPE=$OPENBLAS_CORETYPE for every process})"
  echo "and build-torch2/ (pip LibTorch"
  echo "$(version_of "$VENV_PY"), its MKL). Peers: PyTorch $(version_of "$PY") (Debian) and $(version_of "$VENV_PY") (.venv-torch)."
  echo "Demo data (16,384 x 1024 float32), Adam, 128 rows per rank, $EPOCHS epochs (samples/s of the last),"
  echo "$REPEATS runs each, interleaved, medians. Threads per rank: clustertrain's choice, the peers the same."
  for model in "${MODELS[@]}"; do
    echo
    echo "## $model: training, samples/s (all ranks)"
    echo
    echo "| ranks | threads/rank | clustertrain Debian 1.13 | clustertrain pip 2.x | strong DDP 1.13 | strong DDP 2.x fused Adam | strong DDP 2.x fused Adam + compile | clustertrain best / best peer |$([[ $model == vae_mlp ]] && echo " seeds' DDP (best of 0/1 workers) | clustertrain best / seeds' |")"
    echo "|---:|---:|---:|---:|---:|---:|---:|---:|$([[ $model == vae_mlp ]] && echo "---:|---:|")"
    for ranks in 1 2; do
      ct_deb=$(m "full-build-$model-$ranks"); ct_pip=$(m "full-build-torch2-$model-$ranks")
      s113=$(m "full-strong113-$model-$ranks"); fused=$(m "full-fused-$model-$ranks")
      compiled=$(m "full-compiled-$model-$ranks")
      ct_best=$(max "$ct_deb" "$ct_pip"); peer_best=$(max "$s113" "$fused" "$compiled")
      printf "| %d | %s | %.0f | %.0f | %.0f | %.0f | %.0f | **%s** |" "$ranks" "$(cat "$WORK/threads-$ranks")" \
        "$ct_deb" "$ct_pip" "$s113" "$fused" "$compiled" "$(ratio "$ct_best" "$peer_best")"
      if [[ $model == vae_mlp ]]; then
        seeds=$(max "$(m "full-seeds0-vae_mlp-$ranks")" "$(m "full-seeds1-vae_mlp-$ranks")")
        printf " %.0f | %s |" "$seeds" "$(ratio "$ct_best" "$seeds")"
      fi
      echo
    done
    echo
    echo "## $model: the compute-only step against the machine's limits"
    echo
    if [[ $model == vae_mlp ]]; then
      echo "Per process. Products alone: the step's matrix products (forward, and backward's weight and input"
      echo "gradients, none for the first layer's input), each on its own tensors, back to back, through the"
      echo "build's BLAS at the same threads, in as many processes at once as ranks (\`bench/sgemm.py\`):"
      echo "what the step would take if nothing but its GEMMs ran, measured right after the step in each run."
      echo "Products / step: how close the whole step (forward, backward, Adam, the loss, the elementwise"
      echo "work) comes to that; the median of the runs' own ratios."
      echo
      echo "| ranks | build | step ms | forward ms | backward ms | Adam ms | Adam share | products alone ms | **products / step** | step GFLOP/s | products GFLOP/s | sgemm 2048^3 GFLOP/s |"
      echo "|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
    else
      echo "Per process. GFLOP/s: 6 FLOP per multiply-add of the forward's convolution and matrix products"
      echo "and row (forward, and backward's two), over the step's time, next to the build's BLAS at its"
      echo "best (a 2048-cube sgemm at the same threads, as many processes at once as ranks)."
      echo
      echo "| ranks | build | step ms | forward ms | backward ms | Adam ms | Adam share | step GFLOP/s | sgemm 2048^3 GFLOP/s | **step / sgemm** |"
      echo "|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|"
    fi
    for ranks in 1 2; do
      for build in "${BUILDS[@]}"; do
        json="$WORK/step-$build-$model-$ranks" sg="$WORK/sgemm-$build-$ranks"
        step=$(field "$json" step_ms) adam=$(field "$json" optimizer_ms)
        printf "| %d | %s | %.2f | %.2f | %.2f | %.2f | %.1f%% |" "$ranks" "$build" "$step" "$(field "$json" forward_ms)" \
          "$(field "$json" backward_ms)" "$adam" "$(awk -v a="$adam" -v s="$step" 'BEGIN {print 100 * a / s}')"
        if [[ $model == vae_mlp ]]; then
          products=$(m "products-$build-$ranks")
          column "$json" step_ms >"$WORK/steps"
          printf " %.2f | **%s** | %.1f | %.1f | %.1f |\n" "$products" "$(paired_ratio "$WORK/products-$build-$ranks" "$WORK/steps")" \
            "$(awk -v g="$(field "$sg" products_gflop)" -v s="$step" 'BEGIN {print g / s * 1e3}')" \
            "$(field "$sg" products_gflops)" "$(field "$sg" square_gflops)"
        else
          printf " %.1f | %.1f | **%s** |\n" "$(field "$json" matrix_gflops)" "$(field "$sg" square_gflops)" \
            "$(ratio "$(field "$json" matrix_gflops)" "$(field "$sg" square_gflops)")"
        fi
      done
    done
  done
  echo
  echo "## Where clustertrain's training time goes (vae_mlp, Debian build)"
  echo
  echo "From each run's own split in metrics.jsonl (median shares of train_seconds): building batches,"
  echo "forward/backward/Adam (with overlap this includes the all-reduce running beside backward), waiting"
  echo "for the all-reduce after backward, and the rest (per-step host work: the preemption flag's"
  echo "all-reduce, seeding, loss bookkeeping). Pipeline efficiency: training samples/s over the"
  echo "compute-only step's (all ranks)."
  echo
  echo "| ranks | data | compute | comm wait | rest | pipeline efficiency |"
  echo "|---:|---:|---:|---:|---:|---:|"
  for ranks in 1 2; do
    printf "| %d |" "$ranks"
    for column in 1 2 3 4; do
      cut -d' ' -f"$column" "$WORK/split-$ranks" >"$WORK/column"
      printf " %.3f |" "$(median "$WORK/column")"
    done
    printf " %s |\n" "$(ratio "$(m "full-build-vae_mlp-$ranks")" "$(m "compute-build-vae_mlp-$ranks")")"
  done
} >"$OUT"
cat "$OUT"
