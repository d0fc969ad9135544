#!/usr/bin/env bash
# The GPU check, prepared for a bare machine with an NVIDIA GPU and a CUDA PyTorch but none of
# clustertrain's other dependencies (the `device` machines of this workplace: no network, no
# MPI, HDF5, hwloc or spdlog, maybe not Debian, maybe no dpkg). Steps:
#
#   bench/gpu_check.sh prepare   here (Debian 12, apt): downloads the Debian packages that
#                                machine lacks into .gpu-deps/ (ignored by git; about 45 MB)
#   bench/gpu_check.sh run       there, from the repository root with .gpu-deps/ beside it, in
#                                stages, each with its own time limit and log, going on past a
#                                failed stage
#                                to a summary table (stage, result, seconds, first error) printed
#                                last and written to $OUT/summary.md: versions; unpack (Python
#                                unpacks the packages into /tmp/ct-deps, no dpkg, never into /);
#                                configure and build (the binary and the MPI tests only) against
#                                the LibTorch inside Python's torch (its NCCL and CUDA runtime);
#                                mpi_tests (mpi_np1/2, nccl_np1/2); nccl (nccl_np1 must have run
#                                and passed, not been skipped); demo (3 epochs on one GPU, its GPU
#                                metrics and TensorBoard files); graph_128 and graph_1024 (eager
#                                vs CUDA-graph step); compile_peer (torch.compile; CT_GPU_COMPILE=0
#                                leaves it out). About 7 minutes on 16 cores. At exit $OUT (or
#                                ./gpu-out/) holds summary.md, demo-metrics.jsonl and
#                                stage-logs.tar.gz (every stage's log, ctest's LastTest.log, the
#                                event files): three files, within what the device tool returns.
#                                Without a GPU the GPU stages are reported as "no GPU".
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
# Open MPI and PMIx find their components and help files through their prefixes. The loader
# path to Debian 12's libraries is not exported: on a machine that is not Debian 12 it would
# reach g++, python3, Triton and NCCL too. Builds link with -rpath-link (LINK_FLAGS); only the
# programs built here and Open MPI's run with it (with_deps).
unpack_dependencies() {
  [[ -d "$DEPS_DIR" ]] || { echo "error: $DEPS_DIR missing: run 'bench/gpu_check.sh prepare' where apt works"; return 2; }
  rm -rf "$DEPS"
  python3 bench/unpack_deb.py "$DEPS" "$DEPS_DIR"/*.deb
}

# In this shell, for every stage after the unpacking.
deps_environment() {
  export PATH="$PATH:$DEPS/usr/bin"                      # after the machine's own tools
  export DEPS_LIBRARY_PATH="$ARCH_LIB:$ARCH_LIB/openmpi/lib:$ARCH_LIB/hdf5/openmpi:$ARCH_LIB/pmix2/lib"
  export LINK_FLAGS="-Wl,-rpath-link,${DEPS_LIBRARY_PATH//:/,-rpath-link,}"
  export OPAL_PREFIX="$DEPS/usr"                         # Open MPI: components, wrapper flags, orted
  export PMIX_INSTALL_PREFIX="$ARCH_LIB/pmix2"           # PMIx (its own prefix): plugins, help files
  export PKG_CONFIG_PATH="$ARCH_LIB/pkgconfig" PKG_CONFIG_SYSROOT_DIR="$DEPS"
  # Debian's multiarch headers (hwloc/autogen/config.h) are found by the compiler only under /usr.
  export CPATH="$DEPS/usr/include/x86_64-linux-gnu" LIBRARY_PATH="$ARCH_LIB"
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
  # One node and maybe no ssh: Open MPI's rsh launcher refuses to start without one.
  export OMPI_MCA_plm=isolated
}

# A command with the carried libraries on the loader's path (the programs built here, mpiexec).
with_deps() { LD_LIBRARY_PATH="$DEPS_LIBRARY_PATH${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$@"; }

# Configures and builds TARGETS in $BUILD_DIR; CMake's whole output goes to the stage's log.
configure() {
  local torch_prefix generator=()
  torch_prefix=$(python3 -c 'import torch; print(torch.utils.cmake_prefix_path)')
  command -v ninja >/dev/null && generator=(-G Ninja)
  # Debian's packages have no mpiexec link (update-alternatives makes it): name the real one.
  with_deps cmake -S . -B "$BUILD_DIR" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_PREFIX_PATH="$torch_prefix;$DEPS/usr" -DHDF5_ROOT="$ARCH_LIB/hdf5/openmpi" \
    -DMPI_CXX_COMPILER="$DEPS/usr/bin/mpicxx.openmpi" -DMPI_C_COMPILER="$DEPS/usr/bin/mpicc.openmpi" \
    -DMPIEXEC_EXECUTABLE="$DEPS/usr/bin/mpiexec.openmpi" -DPKG_CONFIG_EXECUTABLE="$DEPS/usr/bin/pkgconf" \
    -DCMAKE_EXE_LINKER_FLAGS="$LINK_FLAGS" -DGTest_DIR="$ARCH_LIB/cmake/GTest" "$@"
}

build() {
  cmake --build "$BUILD_DIR" -j "$(nproc)" "$@"
  local missing
  missing=$(with_deps ldd "$BUILD_DIR/clustertrain" | grep "not found" || true)
  [[ -z $missing ]] || { echo "error: libraries not found:"; echo "$missing"; return 1; }
}

# ctest on the given arguments; the NCCL tests, where asked for, must have run and passed (a
# skip is not a pass on a GPU).
run_tests() {
  (cd "$BUILD_DIR" && with_deps ctest --output-on-failure "$@") | tee "$STAGE_LOG.ctest"
  grep -q "100% tests passed" "$STAGE_LOG.ctest" || { echo "error: tests failed"; return 1; }
  grep "tests passed" "$STAGE_LOG.ctest"  # last, so that the stage's tail shows it
}

nccl_must_run() {
  (cd "$BUILD_DIR" && with_deps ctest -R '^nccl_np1$' -V) | grep -E "\[  (PASSED|SKIPPED|FAILED) \]|error" \
    | tee "$STAGE_LOG.nccl"
  grep -q "PASSED" "$STAGE_LOG.nccl" && ! grep -q "SKIPPED\|FAILED" "$STAGE_LOG.nccl" \
    || { echo "error: the NCCL tests did not run and pass on this GPU"; return 1; }
}

# ---------------------------------------------------------------- stages
# run_stage NAME SECONDS FUNCTION [ARGS]: runs FUNCTION in a bash of its own (set -e: its first
# failing command ends it) under `timeout`, its output in $OUT/NAME.log (the last lines shown),
# and records NAME, passed / FAILED / TIMED OUT, the seconds and the first error line for the
# summary. The script goes on past a failed stage; stages that need it are skipped.
# The device tool brings back at most 8 files from $OUT: the stage logs are kept in LOG_DIR and
# packed at exit into one archive there, beside summary.md and the demo's metrics.
OUT=${OUT:-$PWD/gpu-out}
LOG_DIR=/tmp/ct-gpu-logs
export OUT BUILD_DIR DEPS DEPS_DIR ARCH_LIB LOG_DIR
SUMMARY=()
FAILED_STAGES=" "
run_stage() {
  # CT_GPU_TIME_SCALE stretches every limit, for a machine slower than the device (16 cores).
  local name=$1 limit=$(( $2 * ${CT_GPU_TIME_SCALE:-1} )) start rc=0
  shift 2
  export STAGE_LOG="$LOG_DIR/$name.log"
  start=$(date +%s)
  echo "gpu_check: stage $name (limit ${limit} s)"
  timeout -k 10 "$limit" bash -c 'set -euo pipefail; "$@"' "$name" "$@" >"$STAGE_LOG" 2>&1 || rc=$?
  local seconds=$(( $(date +%s) - start )) result=passed first=""
  if (( rc != 0 )); then
    result=FAILED
    (( rc == 124 || rc == 137 )) && result="TIMED OUT" && echo "error: stage $name passed its limit of $limit s" >>"$STAGE_LOG"
    FAILED_STAGES+="$name "
    first=$(grep -m1 -iE "error|fail|abort|not found" "$STAGE_LOG" | cut -c1-160 || true)
    tail -40 "$STAGE_LOG"
  else
    tail -5 "$STAGE_LOG"
  fi
  SUMMARY+=("| $name | $result | $seconds | ${first//|/\\|} |")
}
skip_stage() { SUMMARY+=("| $1 | skipped | 0 | $2 |"); }
stage_failed() { [[ "$FAILED_STAGES" == *" $1 "* ]]; }

print_summary() {
  {
    echo "| stage | result | seconds | first error |"
    echo "| --- | --- | ---: | --- |"
    printf '%s\n' "${SUMMARY[@]}"
  } >"$OUT/summary.md"
  echo "gpu_check: summary ($OUT/summary.md):"
  cat "$OUT/summary.md"
}

# Whatever the run left, for the caller to read: $OUT/summary.md, $OUT/demo-metrics.jsonl, and
# $OUT/stage-logs.tar.gz with every stage's log, ctest's LastTest.log and the event files.
collect_outputs() {
  mkdir -p "$OUT"
  cp /tmp/ct-gpu/run/metrics.jsonl "$OUT/demo-metrics.jsonl" 2>/dev/null || true
  cp /tmp/ct-gpu/run/tensorboard/events.out.tfevents.* "$LOG_DIR/" 2>/dev/null || true
  cp "$BUILD_DIR/Testing/Temporary/LastTest.log" "$LOG_DIR/ctest-LastTest.log" 2>/dev/null || true
  tar -czf "$OUT/stage-logs.tar.gz" -C "$LOG_DIR" . 2>/dev/null || true
  print_summary
}

cpu_check() {
  rm -rf "$LOG_DIR" && mkdir -p "$OUT" "$LOG_DIR"
  trap collect_outputs EXIT
  run_stage versions 60 print_versions
  run_stage unpack 180 unpack_dependencies
  stage_failed unpack && return 1
  deps_environment
  run_stage configure 300 configure -DCT_WITH_NCCL=OFF
  stage_failed configure && return 1
  run_stage build 900 build
  stage_failed build && return 1
  run_stage tests 900 run_tests -L "unit|mpi" -j 2
  [[ "$FAILED_STAGES" == " " ]]
}

# The demo on one GPU with its GPU metrics (issue 20): the caching allocator's peaks, NVML's
# utilisation where the driver's library loads, TensorBoard's files.
demo() {
  # The demo's data and GPU.
  local common=(--config configs/gw_vae.yaml --set data.train=/tmp/ct-gpu/train.h5 --set data.val=/tmp/ct-gpu/val.h5
                --set train.device=cuda)
  mkdir -p /tmp/ct-gpu
  with_deps "$BUILD_DIR"/clustertrain make-data --out /tmp/ct-gpu/train.h5 --samples 16384 --length 1024 --seed 1 --force
  with_deps "$BUILD_DIR"/clustertrain make-data --out /tmp/ct-gpu/val.h5 --samples 2048 --length 1024 --seed 2 --force
  with_deps "$BUILD_DIR"/clustertrain train "${common[@]}" --set output.dir=/tmp/ct-gpu/run --set train.epochs=3 \
    --set output.checkpoint_every=0 --set output.log_every=0 --set output.tensorboard=true --overwrite
  echo "full step (training samples/s per epoch) and comm seconds (CUDA events):"
  grep -o '"samples_per_s":[0-9.]*\|"comm_seconds":[0-9.e-]*' /tmp/ct-gpu/run/metrics.jsonl | paste -sd' '
  echo "GPU memory and utilisation per epoch:"
  grep -o '"gpu_[a-z_]*":[0-9.]*' /tmp/ct-gpu/run/metrics.jsonl | paste -sd' '
  grep -q '"gpu_mem_allocated_mb":[1-9]' /tmp/ct-gpu/run/metrics.jsonl || { echo "error: no GPU memory peak in the records"; return 1; }
  ls /tmp/ct-gpu/run/tensorboard/events.out.tfevents.* >/dev/null || { echo "error: no TensorBoard event file"; return 1; }
}

# Issue 19: compute-only and full-step samples/s at one batch size, eager and with the CUDA graph
# (runtime.cuda_graph=on); the graph's losses must equal the eager ones to float32 rounding.
graph_steps() {
  local batch=$1 graph
  # The demo's data and GPU.
  local common=(--config configs/gw_vae.yaml --set data.train=/tmp/ct-gpu/train.h5 --set data.val=/tmp/ct-gpu/val.h5
                --set train.device=cuda)
  for graph in off on; do
    echo "batch $batch, runtime.cuda_graph=$graph: compute-only, then full step:"
    with_deps "$BUILD_DIR"/clustertrain bench step "${common[@]}" --set train.batch_size="$batch" \
      --set runtime.cuda_graph=$graph
    with_deps "$BUILD_DIR"/clustertrain train "${common[@]}" --set train.batch_size="$batch" \
      --set runtime.cuda_graph=$graph --set output.dir=/tmp/ct-gpu/graph-$batch-$graph --set train.epochs=2 \
      --set output.checkpoint_every=0 --set output.log_every=0 --overwrite
  done
  PYTHONPATH=tests/e2e python3 - "$batch" <<'PY'
import sys
import runs as run_files
batch = sys.argv[1]
runs = {g: run_files.records(f"/tmp/ct-gpu/graph-{batch}-{g}") for g in ("off", "on")}
for eager, graph in zip(runs["off"], runs["on"]):
    for key in ("train_loss", "val_loss"):
        if abs(eager[key] - graph[key]) > 1e-4 * abs(eager[key]):
            sys.exit(f"error: the CUDA-graph step's {key} {graph[key]} differs from the eager step's {eager[key]}")
print(f"batch {batch}: graph and eager losses equal to 1e-4 relative")
PY
}

# Issue 30 on a GPU: batch_size auto searches with the allocator's peaks, and the trace's spans of
# the training thread are CUDA events (training_thread_clock), read back by trace summary.
trace_autotune() {
  local common=(--config configs/gw_vae.yaml --set data.train=/tmp/ct-gpu/train.h5 --set data.val=/tmp/ct-gpu/val.h5
                --set train.device=cuda)
  with_deps "$BUILD_DIR"/clustertrain train "${common[@]}" --set train.batch_size=auto --set train.epochs=2 \
    --set 'output.trace.steps=[3, 12]' --set output.dir=/tmp/ct-gpu/auto --set output.checkpoint_every=0 \
    --set output.log_every=0 --overwrite
  with_deps "$BUILD_DIR"/clustertrain trace summary /tmp/ct-gpu/auto
  grep -q '"training_thread_clock":"CUDA events' /tmp/ct-gpu/auto/trace/rank-0.json ||
    { echo "error: the trace's training thread is not timed by CUDA events"; return 1; }
  grep -q "^  batch_size: [0-9]" /tmp/ct-gpu/auto/config.yaml || { echo "error: no batch size chosen in config.yaml"; return 1; }
}

# The strongest PyTorch peer, torch.compile(mode="reduce-overhead"), beside plain eager.
compile_peer() {
  (cd bench/peer && python3 compile_step.py --batch 128 --compile none && python3 compile_step.py --batch 128)
}

# Stages, each with its own limit, continuing past a failed one to the summary (about 7
# minutes on 16 cores: the build is only what the stages run). CT_GPU_COMPILE=0 leaves out the
# torch.compile peer (its first compile takes a minute or two).
gpu_check() {
  rm -rf "$LOG_DIR" && mkdir -p "$OUT" "$LOG_DIR"
  trap collect_outputs EXIT
  run_stage versions 60 print_versions
  local gpu=1
  nvidia-smi -L >"$LOG_DIR/gpus.log" 2>&1 || gpu=0
  run_stage unpack 180 unpack_dependencies
  stage_failed unpack && return 1
  deps_environment
  run_stage configure 180 configure -DCT_WITH_NCCL=ON
  stage_failed configure && return 1
  run_stage build 300 build --target clustertrain mpi_tests
  stage_failed build && return 1
  if (( ! gpu )); then
    # The MPI tests need no GPU: they still show that the relocated Open MPI and HDF5 work here.
    run_stage mpi_tests 180 run_tests -R '^(mpi_np1|mpi_np2)$'
    for stage in nccl demo graph_128 graph_1024 trace_autotune compile_peer; do skip_stage "$stage" "no GPU: nvidia-smi -L failed"; done
    return 1
  fi
  run_stage mpi_tests 180 run_tests -R '^(mpi_np1|mpi_np2|nccl_np1|nccl_np2)$'
  run_stage nccl 60 nccl_must_run
  run_stage demo 120 demo
  if stage_failed demo; then
    skip_stage graph "needs the demo's data"
    skip_stage trace_autotune "needs the demo's data"
  else
    run_stage graph_128 120 graph_steps 128
    run_stage graph_1024 120 graph_steps 1024
    run_stage trace_autotune 90 trace_autotune
  fi
  if [[ "${CT_GPU_COMPILE:-1}" != 0 ]]; then run_stage compile_peer 150 compile_peer; else skip_stage compile_peer "CT_GPU_COMPILE=0"; fi
  [[ "$FAILED_STAGES" == " " ]]
}

# What the stages run in their own bash.
export -f print_versions unpack_dependencies with_deps configure build run_tests nccl_must_run demo graph_steps \
  trace_autotune compile_peer

case "${1:-}" in
  prepare) prepare ;;
  run) gpu_check ;;
  cpu) cpu_check ;;
  *) echo "usage: bench/gpu_check.sh prepare|run|cpu (see the header of $0)" >&2; exit 2 ;;
esac
