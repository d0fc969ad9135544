#!/usr/bin/env bash
# The GPU check, prepared for a machine with an NVIDIA GPU and a CUDA PyTorch but none of
# clustertrain's other dependencies (the `device` machines of this workplace: no network, no
# MPI, HDF5, hwloc or spdlog). Two steps:
#
#   bench/gpu_check.sh prepare    here (Debian 12, apt): downloads the Debian packages that
#                                 machine lacks into .gpu-deps/ (ignored by git; about 40 MB)
#   bench/gpu_check.sh run        there, from the repository root with .gpu-deps/ beside it:
#                                 unpacks them into /tmp/ct-deps (never into /), builds with the
#                                 CUDA LibTorch inside Python's torch and NCCL from its nvidia-nccl
#                                 wheel, runs the GPU tests (ctest -L gpu) and the unit tests,
#                                 a short demo training on one GPU, and prints the compute-only
#                                 and the full-step throughput
#
# With the device tool: run(command="bench/gpu_check.sh run", carry=[".gpu-deps"]).
# Status: prepared without a GPU to run it on (no device was lent when it was written); the
# relocation of Debian's Open MPI (OPAL_PREFIX) and HDF5 (HDF5_ROOT) is the part to watch.
set -euo pipefail
cd "$(dirname "$0")/.."
DEPS_DIR=.gpu-deps
PACKAGES=(
  openmpi-bin openmpi-common libopenmpi3 libopenmpi-dev libpmix2 libevent-core-2.1-7 libevent-pthreads-2.1-7
  libhwloc15 libhwloc-dev libucx0 libfabric1 libibverbs1 librdmacm1 libnl-3-200 libnl-route-3-200 libpsm2-2
  libpsm-infinipath1 libnuma1 libmunge2 libltdl7 libpciaccess0
  libhdf5-openmpi-103-1 libhdf5-openmpi-dev libsz2 libaec0
  libspdlog-dev libspdlog1.10 libfmt-dev libfmt9 libyaml-cpp-dev libyaml-cpp0.7 libcli11-dev libgtest-dev
  pkgconf pkgconf-bin libpkgconf3
)

prepare() {
  mkdir -p "$DEPS_DIR"
  (cd "$DEPS_DIR" && apt-get download "${PACKAGES[@]}")
  echo "gpu_check: $(ls "$DEPS_DIR"/*.deb | wc -l) packages, $(du -sh "$DEPS_DIR" | cut -f1) in $DEPS_DIR"
}

run() {
  local deps=/tmp/ct-deps arch_lib
  [[ -d "$DEPS_DIR" ]] || { echo "gpu_check: $DEPS_DIR missing: run 'bench/gpu_check.sh prepare' where apt works" >&2; exit 2; }
  nvidia-smi -L || { echo "gpu_check: no NVIDIA GPU visible" >&2; exit 2; }
  mkdir -p "$deps"
  for deb in "$DEPS_DIR"/*.deb; do dpkg -x "$deb" "$deps"; done
  arch_lib=$deps/usr/lib/x86_64-linux-gnu
  export PATH="$deps/usr/bin:$PATH"
  export LD_LIBRARY_PATH="$arch_lib:$arch_lib/openmpi/lib:$arch_lib/hdf5/openmpi:${LD_LIBRARY_PATH:-}"
  export OPAL_PREFIX="$deps/usr"  # Open MPI finds its components, wrappers' flags and orted under it
  export PKG_CONFIG_PATH="$arch_lib/pkgconfig" PKG_CONFIG_SYSROOT_DIR="$deps"
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
  local torch_prefix nccl_home
  torch_prefix=$(python3 -c 'import torch; print(torch.utils.cmake_prefix_path)')
  nccl_home=$(python3 -c 'import nvidia.nccl, os; print(os.path.dirname(nvidia.nccl.__file__))' 2>/dev/null || true)
  echo "gpu_check: torch $(python3 -c 'import torch; print(torch.__version__, torch.version.cuda)'), NCCL at ${nccl_home:-?}"
  NCCL_HOME="$nccl_home" cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DCT_WITH_NCCL=ON \
    -DCMAKE_PREFIX_PATH="$torch_prefix;$deps/usr" -DHDF5_ROOT="$arch_lib/hdf5/openmpi" \
    -DMPI_CXX_COMPILER="$deps/usr/bin/mpicxx.openmpi" -DMPI_C_COMPILER="$deps/usr/bin/mpicc.openmpi" \
    -DPKG_CONFIG_EXECUTABLE="$deps/usr/bin/pkgconf" -DGTest_DIR="$arch_lib/cmake/GTest" | grep -E "clustertrain:|Error|error"
  cmake --build build-gpu -j "$(nproc)"
  (cd build-gpu && ctest --output-on-failure -L "unit|gpu" -j 4)

  mkdir -p /tmp/ct-gpu
  build-gpu/clustertrain make-data --out /tmp/ct-gpu/train.h5 --samples 16384 --length 1024 --seed 1 --force
  build-gpu/clustertrain make-data --out /tmp/ct-gpu/val.h5 --samples 2048 --length 1024 --seed 2 --force
  local common=(--config configs/gw_vae.yaml --set data.train=/tmp/ct-gpu/train.h5 --set data.val=/tmp/ct-gpu/val.h5
                --set train.device=cuda)
  build-gpu/clustertrain train "${common[@]}" --set output.dir=/tmp/ct-gpu/run --set train.epochs=3 \
    --set output.checkpoint_every=0 --set output.log_every=0
  echo "gpu_check: compute-only step on one GPU (batch 128, then 1024):"
  build-gpu/clustertrain bench step "${common[@]}" 2>/dev/null | tail -1
  build-gpu/clustertrain bench step "${common[@]}" --set train.batch_size=1024 2>/dev/null | tail -1
  echo "gpu_check: full step (training samples/s per epoch):"
  grep -o '"samples_per_s":[0-9.]*' /tmp/ct-gpu/run/metrics.jsonl
  # Issue 20 on a GPU: the records carry the caching allocator's peaks (and NVML's utilisation
  # where the driver's library loads), and TensorBoard's files are there.
  echo "gpu_check: GPU memory and utilisation per epoch:"
  grep -o '"gpu_[a-z_]*":[0-9.]*' /tmp/ct-gpu/run/metrics.jsonl | paste -sd' '
  grep -q '"gpu_mem_allocated_mb":[1-9]' /tmp/ct-gpu/run/metrics.jsonl || { echo "gpu_check: FAIL: no GPU memory peak in the records"; exit 1; }
  ls /tmp/ct-gpu/run/tensorboard/events.out.tfevents.* >/dev/null || { echo "gpu_check: FAIL: no TensorBoard event file"; exit 1; }
}

case "${1:-}" in
  prepare) prepare ;;
  run) run ;;
  *) echo "usage: bench/gpu_check.sh prepare|run (see the header of $0)" >&2; exit 2 ;;
esac
