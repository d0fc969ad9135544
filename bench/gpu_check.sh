#!/usr/bin/env bash
# The GPU check, prepared for a bare machine with an NVIDIA GPU and a CUDA PyTorch but none of
# clustertrain's other dependencies (the `device` machines of this workplace: no network, no
# MPI, HDF5, hwloc or spdlog, maybe not Debian, maybe no dpkg). Steps:
#
#   bench/gpu_check.sh prepare   here (Debian 12, apt): downloads the Debian packages that
#                                machine lacks into .gpu-deps/ (ignored by git; about 45 MB)
#   bench/gpu_check.sh run       there, from the repository root with .gpu-deps/ beside it:
#                                unpacks them into /tmp/ct-deps (never into /; Python unpacks
#                                them, no dpkg needed), builds against the LibTorch inside
#                                Python's torch (its NCCL and CUDA runtime: CMakeLists.txt), runs
#                                the unit, MPI and NCCL tests (nccl_np1 must have run, not been
#                                skipped), a short demo training on one GPU with its GPU metrics,
#                                and the step benchmarks
#   bench/gpu_check.sh cpu       the same build and unit/MPI tests without a GPU: the proof, on a
#                                CPU machine, that the relocated packages work (bench/bare_root.sh
#                                runs it in a minimal Debian root)
#
# With the device tool: run(command="bench/gpu_check.sh run", carry=[".gpu-deps"]).
# It prints first what decides whether the build can work: torch's version, its CUDA, its C++
# ABI, the CUDA toolkit's version.
set -euo pipefail
cd "$(dirname "$0")/.."
DEPS_DIR=.gpu-deps
BUILD_DIR=${CT_GPU_BUILD_DIR:-build-gpu}
DEPS=/tmp/ct-deps
ARCH_LIB=$DEPS/usr/lib/x86_64-linux-gnu
PACKAGES=(
  openmpi-bin openmpi-common libopenmpi3 libopenmpi-dev libpmix2 libevent-core-2.1-7 libevent-pthreads-2.1-7
  libhwloc15 libhwloc-dev libucx0 libfabric1 libibverbs1 librdmacm1 libnl-3-200 libnl-route-3-200 libpsm2-2
  libpsm-infinipath1 libnuma1 libmunge2 libltdl7 libpciaccess0 libxnvctrl0
  libhdf5-openmpi-103-1 libhdf5-openmpi-dev libsz2 libaec0
  # libhdf5_openmpi's own dependencies (its ROS3 driver): libcurl4 and libssl3 and theirs
  libcurl4 libssl3 libnghttp2-14 libpsl5 librtmp1 libssh2-1 libldap-2.5-0 libsasl2-2 libgssapi-krb5-2 libkrb5-3
  libk5crypto3 libkrb5support0 libkeyutils1 libbrotli1 libidn2-0 libunistring2 libgnutls30 libhogweed6 libnettle8
  libgmp10 libp11-kit0 libtasn1-6 libffi8
  libspdlog-dev libspdlog1.10 libfmt-dev libfmt9 libyaml-cpp-dev libyaml-cpp0.7 libcli11-dev libgtest-dev
  pkgconf pkgconf-bin libpkgconf3
  zlib1g-dev                        # checkpoint CRC checks (util/zip_check)
)

prepare() {
  mkdir -p "$DEPS_DIR"
  (cd "$DEPS_DIR" && apt-get download "${PACKAGES[@]}")
  echo "gpu_check: $(ls "$DEPS_DIR"/*.deb | wc -l) packages, $(du -sh "$DEPS_DIR" | cut -f1) in $DEPS_DIR"
}

# What decides whether the build can work, before anything is built.
print_versions() {
  python3 - <<'PY'
import torch
print(f"gpu_check: torch {torch.__version__}, CUDA {torch.version.cuda}, "
      f"C++ ABI cxx11={int(torch._C._GLIBCXX_USE_CXX11_ABI)}, cmake prefix {torch.utils.cmake_prefix_path}")
PY
  if command -v nvcc >/dev/null; then
    echo "gpu_check: CUDA toolkit: $(nvcc --version | grep -o 'release [0-9.]*')"
  else
    echo "gpu_check: CUDA toolkit: no nvcc on PATH"
  fi
  echo "gpu_check: cmake $(cmake --version | head -1 | grep -o '[0-9.]*$'), $(c++ --version | head -1)"
}

# The carried packages, unpacked under $DEPS, and the environment that makes them work there:
# Open MPI and PMIx find their components and help files through their prefixes, the loader
# finds the libraries through LD_LIBRARY_PATH.
unpack_dependencies() {
  [[ -d "$DEPS_DIR" ]] || { echo "gpu_check: $DEPS_DIR missing: run 'bench/gpu_check.sh prepare' where apt works" >&2; exit 2; }
  rm -rf "$DEPS"
  python3 bench/unpack_deb.py "$DEPS" "$DEPS_DIR"/*.deb
  export PATH="$DEPS/usr/bin:$PATH"
  export LD_LIBRARY_PATH="$ARCH_LIB:$ARCH_LIB/openmpi/lib:$ARCH_LIB/hdf5/openmpi:$ARCH_LIB/pmix2/lib:${LD_LIBRARY_PATH:-}"
  export OPAL_PREFIX="$DEPS/usr"                         # Open MPI: components, wrapper flags, orted
  export PMIX_INSTALL_PREFIX="$ARCH_LIB/pmix2"           # PMIx (its own prefix): plugins, help files
  export PKG_CONFIG_PATH="$ARCH_LIB/pkgconfig" PKG_CONFIG_SYSROOT_DIR="$DEPS"
  # Debian's multiarch headers (hwloc/autogen/config.h) are found by the compiler only under /usr.
  export CPATH="$DEPS/usr/include/x86_64-linux-gnu" LIBRARY_PATH="$ARCH_LIB"
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
  # One node and maybe no ssh: Open MPI's rsh launcher refuses to start without one.
  export OMPI_MCA_plm=isolated
}

# Configures and builds in $BUILD_DIR; CMake's whole output is kept and shown on failure.
build() {
  local torch_prefix log=/tmp/ct-gpu-configure.log
  torch_prefix=$(python3 -c 'import torch; print(torch.utils.cmake_prefix_path)')
  local generator=()
  command -v ninja >/dev/null && generator=(-G Ninja)
  # Debian's packages have no mpiexec link (update-alternatives makes it): name the real one.
  if ! cmake -S . -B "$BUILD_DIR" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release \
      -DCMAKE_PREFIX_PATH="$torch_prefix;$DEPS/usr" -DHDF5_ROOT="$ARCH_LIB/hdf5/openmpi" \
      -DMPI_CXX_COMPILER="$DEPS/usr/bin/mpicxx.openmpi" -DMPI_C_COMPILER="$DEPS/usr/bin/mpicc.openmpi" \
      -DMPIEXEC_EXECUTABLE="$DEPS/usr/bin/mpiexec.openmpi" -DPKG_CONFIG_EXECUTABLE="$DEPS/usr/bin/pkgconf" \
      -DGTest_DIR="$ARCH_LIB/cmake/GTest" "$@" >"$log" 2>&1; then
    cat "$log"
    echo "gpu_check: FAIL: configure failed (whole output above)" >&2
    exit 1
  fi
  grep "clustertrain:" "$log"
  cmake --build "$BUILD_DIR" -j "$(nproc)"
  local missing
  missing=$(ldd "$BUILD_DIR/clustertrain" | grep "not found" || true)
  [[ -z $missing ]] || { echo "gpu_check: FAIL: libraries not found:"; echo "$missing"; exit 1; }
}

# ctest on the given labels; the NCCL tests must have run (a skip is not a pass on a GPU).
run_tests() {
  (cd "$BUILD_DIR" && ctest --output-on-failure -L "$1" -j 4 2>&1 | tee /tmp/ct-gpu-ctest.log | tail -25)
  grep -q "100% tests passed" /tmp/ct-gpu-ctest.log || { echo "gpu_check: FAIL: tests failed"; exit 1; }
}

cpu_check() {
  print_versions
  unpack_dependencies
  build -DCT_WITH_NCCL=OFF
  run_tests "unit|mpi"
  echo "gpu_check: cpu: configure, build, unit and MPI tests passed with the carried packages"
}

gpu_check() {
  nvidia-smi -L || { echo "gpu_check: no NVIDIA GPU visible" >&2; exit 2; }
  print_versions
  unpack_dependencies
  build -DCT_WITH_NCCL=ON
  run_tests "unit|mpi|gpu"
  (cd "$BUILD_DIR" && ctest -R '^nccl_np1$' -V 2>&1 | grep -E "\[  PASSED  \]|\[  SKIPPED \]") | tee /tmp/ct-nccl.log
  if ! grep -q PASSED /tmp/ct-nccl.log || grep -q SKIPPED /tmp/ct-nccl.log; then
    echo "gpu_check: FAIL: the NCCL tests did not run on this GPU"
    exit 1
  fi

  mkdir -p /tmp/ct-gpu
  "$BUILD_DIR"/clustertrain make-data --out /tmp/ct-gpu/train.h5 --samples 16384 --length 1024 --seed 1 --force
  "$BUILD_DIR"/clustertrain make-data --out /tmp/ct-gpu/val.h5 --samples 2048 --length 1024 --seed 2 --force
  local common=(--config configs/gw_vae.yaml --set data.train=/tmp/ct-gpu/train.h5 --set data.val=/tmp/ct-gpu/val.h5
                --set train.device=cuda)
  "$BUILD_DIR"/clustertrain train "${common[@]}" --set output.dir=/tmp/ct-gpu/run --set train.epochs=3 \
    --set output.checkpoint_every=0 --set output.log_every=0 --set output.tensorboard=true
  echo "gpu_check: full step (training samples/s per epoch) and comm seconds (CUDA events):"
  grep -o '"samples_per_s":[0-9.]*\|"comm_seconds":[0-9.e-]*' /tmp/ct-gpu/run/metrics.jsonl | paste -sd' '
  graph_steps "${common[@]}"
  # Issue 20 on a GPU: the records carry the caching allocator's peaks (and NVML's utilisation
  # where the driver's library loads), and TensorBoard's files are there.
  echo "gpu_check: GPU memory and utilisation per epoch:"
  grep -o '"gpu_[a-z_]*":[0-9.]*' /tmp/ct-gpu/run/metrics.jsonl | paste -sd' '
  grep -q '"gpu_mem_allocated_mb":[1-9]' /tmp/ct-gpu/run/metrics.jsonl || { echo "gpu_check: FAIL: no GPU memory peak in the records"; exit 1; }
  ls /tmp/ct-gpu/run/tensorboard/events.out.tfevents.* >/dev/null || { echo "gpu_check: FAIL: no TensorBoard event file"; exit 1; }
  echo "gpu_check: all GPU checks passed"
}

# Issue 19 on a GPU: compute-only and full-step samples/s at batch 128 and 1024, eager and with
# the CUDA graph (runtime.cuda_graph=on), and Python's torch.compile(mode="reduce-overhead");
# the graph's losses must equal the eager ones to float32 rounding.
graph_steps() {
  local batch graph
  for batch in 128 1024; do
    for graph in off on; do
      echo "gpu_check: batch $batch, runtime.cuda_graph=$graph: compute-only, then full step:"
      "$BUILD_DIR"/clustertrain bench step "$@" --set train.batch_size=$batch --set runtime.cuda_graph=$graph 2>/dev/null | tail -1
      "$BUILD_DIR"/clustertrain train "$@" --set train.batch_size=$batch --set runtime.cuda_graph=$graph \
        --set output.dir=/tmp/ct-gpu/graph-$batch-$graph --set train.epochs=2 --set output.checkpoint_every=0 \
        --set output.log_every=0 2>&1 | grep -E "cuda_graph|^epoch"
    done
    python3 - "$batch" <<'PY' || { echo "gpu_check: FAIL: the CUDA-graph step's losses differ from the eager step's"; exit 1; }
import json, sys
batch = sys.argv[1]
runs = {g: [json.loads(l) for l in open(f"/tmp/ct-gpu/graph-{batch}-{g}/metrics.jsonl")] for g in ("off", "on")}
for eager, graph in zip(runs["off"], runs["on"]):
    for key in ("train_loss", "val_loss"):
        assert abs(eager[key] - graph[key]) <= 1e-4 * abs(eager[key]), (key, eager[key], graph[key])
print(f"gpu_check: batch {batch}: graph and eager losses equal to 1e-4 relative")
PY
    (cd bench/peer && python3 compile_step.py --batch "$batch" --compile none && \
      python3 compile_step.py --batch "$batch") 2>&1 | grep -E "samples_per_s|Error" || true
  done
}

case "${1:-}" in
  prepare) prepare ;;
  run) gpu_check ;;
  cpu) cpu_check ;;
  *) echo "usage: bench/gpu_check.sh prepare|run|cpu (see the header of $0)" >&2; exit 2 ;;
esac
