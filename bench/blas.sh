#!/usr/bin/env bash
# Which BLAS for this processor: `clustertrain bench step` of vae_mlp and vae_conv1d (the demo's
# shapes, batch 128 per rank) at 1 rank x 2 threads and 2 ranks x 1 thread, with every BLAS the
# Debian build can call sgemm_ from -- OpenBLAS (OpenMP and pthreads builds), BLIS (OpenMP and
# pthreads), the reference BLAS -- and the pip build's MKL (its best code path, and AVX2 only);
# REPEATS interleaved rounds, medians of step ms. Writes bench/results/blas_intel.md or blas_amd.md
# (by the CPU's vendor: the best BLAS differs between them).
#   bench/blas.sh [REPEATS]      (default 3; about 8 minutes on 2 cores)
# The other BLAS packages are downloaded and unpacked into a temporary directory (apt-get
# download, dpkg-deb -x) and loaded through LD_LIBRARY_PATH, never installed: installing one can
# repoint the system's libblas.so.3 alternative (libopenblas0-pthread outranks the OpenMP build).
set -euo pipefail
cd "$(dirname "$0")/.."
REPEATS=${1:-3}
launch/setup.sh >/dev/null
launch/setup.sh --torch pip >/dev/null
launch/demo_data.sh >/dev/null
source launch/mpi_env.sh
case $(grep -m1 vendor_id /proc/cpuinfo | cut -d: -f2 | tr -d ' ') in
  GenuineIntel) RESULT=bench/results/blas_intel.md ;;
  AuthenticAMD) RESULT=bench/results/blas_amd.md ;;
  *) RESULT=bench/results/blas_other.md ;;
esac
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
(cd "$WORK" && apt-get download -q libopenblas0-pthread libblis4-openmp libblis4-pthread >/dev/null 2>&1) \
  || { echo "blas.sh: apt-get download of the BLAS packages failed (needs Debian's archive)" >&2; exit 2; }
for deb in "$WORK"/*.deb; do dpkg-deb -x "$deb" "$WORK/root"; done
LIB=$WORK/root/usr/lib/x86_64-linux-gnu
SYSTEM=/usr/lib/x86_64-linux-gnu
# name|build|environment (KEY=VALUE ...; THREADS is replaced by the threads per rank)
VARIANTS=(
  "OpenBLAS, OpenMP (the default)|build|LD_LIBRARY_PATH=$SYSTEM/openblas-openmp"
  "OpenBLAS, pthreads|build|LD_LIBRARY_PATH=$LIB/openblas-pthread"
  "BLIS, OpenMP, BLIS_NUM_THREADS=threads|build|LD_LIBRARY_PATH=$LIB/blis-openmp BLIS_NUM_THREADS=THREADS"
  "BLIS, pthreads, BLIS_NUM_THREADS=threads|build|LD_LIBRARY_PATH=$LIB/blis-pthread BLIS_NUM_THREADS=THREADS"
  "reference BLAS|build|LD_LIBRARY_PATH=$SYSTEM/blas"
  "MKL (pip), the CPU's best path|build-torch2|"
  "MKL (pip), MKL_ENABLE_INSTRUCTIONS=AVX2|build-torch2|MKL_ENABLE_INSTRUCTIONS=AVX2"
)
# One bench step; prints its step ms and keeps rank 0's BLAS line.
step_ms() {  # VARIANT_INDEX MODEL RANKS THREADS
  IFS='|' read -r _ build environment <<<"${VARIANTS[$1]}"
  local steps=$([[ $2 == vae_mlp ]] && echo 100 || echo 20) flags=()
  for kv in ${environment//THREADS/$4}; do flags+=(-x "$kv"); done
  mpirun -np "$3" $(mpi_flags_for "$3") "${flags[@]}" "$build/clustertrain" bench step --config configs/gw_vae.yaml \
    --set model.kind="$2" --steps "$steps" --warmup 5 >"$WORK/out" 2>&1 || { cat "$WORK/out" >&2; exit 1; }
  grep -m1 "BLAS: " "$WORK/out" >"$WORK/blas-$1" || true
  grep -o '"step_ms": [0-9.]*' "$WORK/out" | cut -d' ' -f2
}
for run in $(seq "$REPEATS"); do
  echo "blas: run $run/$REPEATS" >&2
  for ranks in 1 2; do
    threads=$(( $(nproc) / ranks ))
    for model in vae_mlp vae_conv1d; do
      for i in "${!VARIANTS[@]}"; do
        step_ms "$i" "$model" "$ranks" "$threads" >>"$WORK/ms-$i-$model-$ranks"
      done
    done
  done
done
median() { sort -g "$1" | awk '{v[NR]=$1} END {print (NR%2 ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2)}'; }
{
  echo "# Which BLAS: the step with each BLAS clustertrain can run on"
  echo
  echo "Measured by \`bench/blas.sh $REPEATS\` on $(date -u +%F): $(nproc) cores ($(lscpu | sed -n 's/^Model name: *//p'), $(grep -m1 vendor_id /proc/cpuinfo | cut -d: -f2 | tr -d ' '))."
  echo "\`clustertrain bench step --config configs/gw_vae.yaml\`, batch 128 per rank; step ms per rank, medians of $REPEATS"
  echo "interleaved rounds (lower is better). The BLAS each run named at start is listed below the table."
  echo
  echo "| BLAS | build | vae_mlp 1x$(nproc) | vae_mlp $(nproc)x1 | vae_conv1d 1x$(nproc) | vae_conv1d $(nproc)x1 |"
  echo "|---|---|---:|---:|---:|---:|"
  for i in "${!VARIANTS[@]}"; do
    IFS='|' read -r name build _ <<<"${VARIANTS[$i]}"
    printf "| %s | %s |" "$name" "$build"
    for model in vae_mlp vae_conv1d; do
      for ranks in 1 2; do printf " %.2f |" "$(median "$WORK/ms-$i-$model-$ranks")"; done
    done
    echo
  done
  echo
  for i in "${!VARIANTS[@]}"; do
    IFS='|' read -r name _ _ <<<"${VARIANTS[$i]}"
    echo "- $name: \`$(cut -c1-220 "$WORK/blas-$i" | sed "s|$WORK|TMP|g")\`"
  done
} >"$RESULT"
cat "$RESULT"
