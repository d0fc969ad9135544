#!/usr/bin/env bash
# Installs what clustertrain needs from Debian's archive (skipping what is installed) and
# builds it with CMake (Release) into build/.
#
#   launch/setup.sh            build dependencies + build the clustertrain binary only
#   launch/setup.sh --tests    also what the tests need (python3-torch, python3-h5py), and
#                              every target (the test binaries too)
#
# Environment: CT_BUILD_DIR (default build), CMAKE_ARGS (extra configure flags, e.g.
# -DCMAKE_PREFIX_PATH=/opt/libtorch for a CUDA LibTorch 2.x).
set -euo pipefail
cd "$(dirname "$0")/.."

PACKAGES=(
  build-essential cmake ninja-build pkg-config
  libtorch-dev libopenblas0-openmp    # without OpenBLAS LibTorch runs on the reference BLAS, ~7x slower
  libopenmpi-dev openmpi-bin
  libhdf5-openmpi-dev                 # parallel HDF5 (MPI-IO); the serial build is not enough
  libhwloc-dev libspdlog-dev libyaml-cpp-dev libcli11-dev libgtest-dev
)
TARGETS=(--target clustertrain)       # the quickstart waits for nothing it does not run
if [[ "${1:-}" == "--tests" ]]; then
  TARGETS=()
  PACKAGES+=(python3-torch python3-h5py python3-numpy
             slurm-wlm munge             # a local Slurm for tests/e2e/slurm.sh (skipped without it)
             python3-matplotlib          # the scaling study's plot
             time                        # /usr/bin/time: peak memory in tests/e2e/convert.sh
             clang-format)               # launch/format.sh: the sources match .clang-format
fi

missing=()
for pkg in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done
if (( ${#missing[@]} )); then
  echo "setup: installing ${missing[*]}"
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
  "${SUDO[@]}" apt-get update -qq
  "${SUDO[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
else
  echo "setup: all ${#PACKAGES[@]} packages already installed"
fi

BUILD_DIR=${CT_BUILD_DIR:-build}
if [[ -f "$BUILD_DIR/CMakeCache.txt" ]]; then
  cmake -S . -B "$BUILD_DIR" ${CMAKE_ARGS:-} >/dev/null
else
  GENERATOR=()
  command -v ninja >/dev/null && GENERATOR=(-G Ninja)
  cmake -S . -B "$BUILD_DIR" "${GENERATOR[@]}" -DCMAKE_BUILD_TYPE=Release ${CMAKE_ARGS:-} | grep -E "clustertrain:|Error" || true
fi
cmake --build "$BUILD_DIR" -j "$(nproc)" "${TARGETS[@]}"
echo "setup: built $BUILD_DIR/clustertrain${TARGETS[*]:+ (only; --tests builds the tests too)}"
