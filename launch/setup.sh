#!/usr/bin/env bash
# Installs what clustertrain needs from Debian's archive (skipping what is installed) and
# builds it with CMake (Release) into build/.
#
#   launch/setup.sh            build dependencies + build the clustertrain binary only
#   launch/setup.sh --tests    also what the tests need (python3-torch, python3-h5py), and
#                              every target (the test binaries too)
#   launch/setup.sh --torch pip [--tests]
#                              against LibTorch 2.x from PyPI instead of Debian's 1.13.1: torch
#                              (pinned below; a CUDA build, which also runs without a GPU) in a
#                              virtual environment .venv-torch/, NCCL from its nvidia-nccl wheel,
#                              the CUDA toolkit from /usr/local/cuda; built into build-torch2/
#
# Environment: CT_BUILD_DIR (default build, or build-torch2 with --torch pip), CMAKE_ARGS (extra
# configure flags, e.g. -DCMAKE_PREFIX_PATH=/opt/libtorch for the LibTorch zip),
# CT_TORCH_PIP_VERSION (default below), CT_TORCH_VENV (default .venv-torch), CUDA_HOME.
set -euo pipefail
cd "$(dirname "$0")/.."

# torch 2.13.0's wheels use CUDA 13.0, the toolkit these machines have (a toolkit older than
# torch's CUDA cannot build against it), and the new C++ ABI (torch >= 2.7), like Debian's libraries.
TORCH_PIP_VERSION=${CT_TORCH_PIP_VERSION:-2.13.0}
TESTS=0
TORCH=debian
while (( $# )); do
  case "$1" in
    --tests) TESTS=1 ;;
    --torch) TORCH=${2:-}; shift ;;
    *) echo "setup: unknown argument '$1' (--tests, --torch debian|pip)" >&2; exit 2 ;;
  esac
  shift
done
[[ "$TORCH" == debian || "$TORCH" == pip ]] || { echo "setup: --torch takes debian or pip, got '$TORCH'" >&2; exit 2; }

PACKAGES=(
  build-essential cmake ninja-build pkg-config
  libtorch-dev libopenblas0-openmp    # without OpenBLAS LibTorch runs on the reference BLAS, ~7x slower
  libopenmpi-dev openmpi-bin
  libhdf5-openmpi-dev                 # parallel HDF5 (MPI-IO); the serial build is not enough
  libhwloc-dev libspdlog-dev libyaml-cpp-dev libcli11-dev libgtest-dev
  zlib1g-dev                          # CRC-32 checks of checkpoints
  liblzf-dev                          # h5py's LZF compression (clustertrain decodes it itself)
  python3-matplotlib                  # the loss picture of the demo (launch/plot_runs.py)
)
TARGETS=(--target clustertrain)       # the quickstart waits for nothing it does not run
if [[ "$TORCH" == pip ]]; then
  PACKAGES+=(python3-venv)
fi
if (( TESTS )); then
  TARGETS=()
  PACKAGES+=(python3-torch python3-h5py python3-numpy
             slurm-wlm munge             # a local Slurm for tests/e2e/slurm.sh (skipped without it)
             iproute2 util-linux procps  # two fake nodes (ip, unshare, nsenter; tests/nodes/)
             python3-protobuf            # tests/e2e/read_events.py parses the TensorBoard event files
             time                        # /usr/bin/time: peak memory in tests/e2e/convert.sh
             mpich libmpich-dev libhdf5-mpich-dev  # the sanitizer build is against MPICH (launch/test.sh)
             clang-format)               # launch/format.sh: the sources match .clang-format
fi

missing=()
for pkg in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done
if (( ${#missing[@]} )); then
  # apt's output goes to a log, shown when it fails: the quickstart's screen stays readable.
  APT_LOG=${TMPDIR:-/tmp}/clustertrain-setup-apt.log
  echo "setup: installing ${#missing[@]} Debian package(s): ${missing[*]} (apt's output: $APT_LOG)"
  if [[ $(id -u) -eq 0 ]]; then
    SUDO=()
  elif command -v sudo >/dev/null && sudo -n true 2>/dev/null; then
    SUDO=(sudo -n)
  else
    echo "setup: error: packages missing and no root rights to install them. Ask an administrator to run:" >&2
    echo "  apt-get install -y ${missing[*]}" >&2
    exit 1
  fi
  export DEBIAN_FRONTEND=noninteractive
  if ! { "${SUDO[@]}" apt-get update -qq && "${SUDO[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"; } \
       >"$APT_LOG" 2>&1; then
    tail -n 40 "$APT_LOG" >&2
    echo "setup: error: apt-get failed (the end of its output above; all of it in $APT_LOG)" >&2
    exit 1
  fi
else
  echo "setup: all ${#PACKAGES[@]} packages already installed"
fi

# The BLAS that Debian's LibTorch calls sgemm_ from is whatever libblas.so.3 points at. On the
# CPUs measured (bench/results/blas_intel.md, blas_amd.md) OpenBLAS's OpenMP build is the
# fastest: the pthreads build ran the demo's step 1.7x (Intel) and 2.1x (AMD) slower beside
# LibTorch's OpenMP threads, BLIS 2.3x and 1.6x, the reference BLAS 33x and 28x (1 rank x 2
# threads). The pthreads build outranks the OpenMP one in Debian's alternatives when both are
# installed, so the choice is made here (CT_KEEP_BLAS=1 keeps whatever is selected).
BLAS_ALTERNATIVE=libblas.so.3-x86_64-linux-gnu
OPENMP_BLAS=/usr/lib/x86_64-linux-gnu/openblas-openmp/libblas.so.3
current_blas=$(readlink -f "/etc/alternatives/$BLAS_ALTERNATIVE" 2>/dev/null || true)
if [[ "$TORCH" == debian && -e $OPENMP_BLAS && -n $current_blas && $current_blas != "$(readlink -f $OPENMP_BLAS)" ]]; then
  if [[ ${CT_KEEP_BLAS:-0} != 1 && $(id -u) -eq 0 ]]; then
    update-alternatives --quiet --set "$BLAS_ALTERNATIVE" "$OPENMP_BLAS"
    echo "setup: libblas.so.3 pointed at $current_blas; selected OpenBLAS's OpenMP build, the fastest measured" \
         "for clustertrain's CPU step (bench/results/blas_intel.md, blas_amd.md; CT_KEEP_BLAS=1 keeps the previous choice)"
  else
    echo "setup: note: libblas.so.3 points at $current_blas; clustertrain's CPU step is fastest on OpenBLAS's" \
         "OpenMP build (bench/results/blas_intel.md, blas_amd.md): update-alternatives --set $BLAS_ALTERNATIVE $OPENMP_BLAS"
  fi
fi

BUILD_DIR=${CT_BUILD_DIR:-build}
EXTRA_ARGS=()
if [[ "$TORCH" == pip ]]; then
  BUILD_DIR=${CT_BUILD_DIR:-build-torch2}
  CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
  if [[ ! -x "$CUDA_HOME/bin/nvcc" ]]; then
    echo "setup: error: pip's torch is a CUDA build, and its CMake files need the CUDA toolkit (nvcc, headers)," >&2
    echo "  which is not at $CUDA_HOME. Install NVIDIA's CUDA toolkit of torch's CUDA version or newer" \
         "(13.0 for torch 2.13) and set CUDA_HOME." >&2
    exit 1
  fi
  VENV=${CT_TORCH_VENV:-.venv-torch}
  [[ -x "$VENV/bin/python" ]] || python3 -m venv "$VENV"
  if [[ "$("$VENV/bin/python" -c 'import torch; print(torch.__version__)' 2>/dev/null)" != "$TORCH_PIP_VERSION"* ]]; then
    echo "setup: installing torch==$TORCH_PIP_VERSION from PyPI into $VENV (about 3 GB with its CUDA libraries)"
    "$VENV/bin/python" -m pip install -q --upgrade pip
    "$VENV/bin/python" -m pip install -q "torch==$TORCH_PIP_VERSION"
  fi
  read -r torch_version torch_cuda torch_abi torch_prefix < <("$VENV/bin/python" -c \
    'import torch; print(torch.__version__, torch.version.cuda, int(torch.compiled_with_cxx11_abi()), torch.utils.cmake_prefix_path)')
  echo "setup: torch $torch_version from pip (CUDA $torch_cuda, cxx11 ABI $torch_abi); CUDA toolkit" \
       "$("$CUDA_HOME/bin/nvcc" --version | grep -o 'release [0-9.]*' | cut -d' ' -f2) at $CUDA_HOME"
  EXTRA_ARGS=(-DCMAKE_PREFIX_PATH="$torch_prefix" -DCUDAToolkit_ROOT="$CUDA_HOME"
              -DCMAKE_CUDA_COMPILER="$CUDA_HOME/bin/nvcc")
  # The BLAS per processor (docs/benchmarks.md): pip's LibTorch carries MKL, the fastest measured
  # on Intel; on AMD it takes MKL's path for other vendors, measured from 1.44x slower than the
  # Debian build's OpenBLAS to 1.1x faster (two AMD EPYC VMs): worth measuring on the nodes.
  if grep -q "^vendor_id.*AuthenticAMD" /proc/cpuinfo 2>/dev/null; then
    echo "setup: note: on this AMD CPU pip's LibTorch computes with MKL's code path for CPUs not Intel's:" \
         "on one AMD EPYC the demo's step ran 1.44x slower than the Debian build's (OpenBLAS) at 1 rank, on" \
         "another (Zen 3) within 10%. Compare both builds' clustertrain bench step here before CPU training" \
         "(docs/benchmarks.md). GPUs are not affected."
  fi
fi
if [[ -f "$BUILD_DIR/CMakeCache.txt" ]]; then
  cmake -S . -B "$BUILD_DIR" "${EXTRA_ARGS[@]}" ${CMAKE_ARGS:-} >/dev/null
else
  GENERATOR=()
  command -v ninja >/dev/null && GENERATOR=(-G Ninja)
  # The configure output is kept whole in BUILD_DIR/configure.log; its summary lines (and any
  # error) are shown.
  mkdir -p "$BUILD_DIR"
  if ! cmake -S . -B "$BUILD_DIR" "${GENERATOR[@]}" -DCMAKE_BUILD_TYPE=Release "${EXTRA_ARGS[@]}" ${CMAKE_ARGS:-} \
       >"$BUILD_DIR/configure.log" 2>&1; then
    cat "$BUILD_DIR/configure.log" >&2
    echo "setup: error: CMake could not configure $BUILD_DIR (above)" >&2
    exit 1
  fi
  grep -E "clustertrain:" "$BUILD_DIR/configure.log" || true
fi
# The compiler's output goes to a log, shown when the build fails.
echo "setup: building $BUILD_DIR (compiler output: $BUILD_DIR/build.log)"
if ! cmake --build "$BUILD_DIR" -j "$(nproc)" "${TARGETS[@]}" >"$BUILD_DIR/build.log" 2>&1; then
  grep -E -B2 -A6 "error|FAILED" "$BUILD_DIR/build.log" | tail -n 60 >&2 || tail -n 60 "$BUILD_DIR/build.log" >&2
  echo "setup: error: the build failed (the errors above; all of it in $BUILD_DIR/build.log)" >&2
  exit 1
fi
echo "setup: built $BUILD_DIR/clustertrain${TARGETS[*]:+ (only; --tests builds the tests too)}"
