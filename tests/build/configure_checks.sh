#!/usr/bin/env bash
# Configure-time checks a cluster user meets with a pip or zip LibTorch, each on a fake LibTorch
# prefix that wraps Debian's real one (so CMake gets as far as the check under test):
#   1. LibTorch built with the old C++ ABI (pip wheels before 2.7): stops, naming the fix;
#   2. a CUDA LibTorch (libtorch_cuda.so, version.py) newer than the CUDA toolkit: stops;
#   3. a CUDA LibTorch and no CUDA toolkit at all: stops with our message, not LibTorch's.
# Usage: configure_checks.sh SOURCE_DIR TORCH_CONFIG_DIR GENERATOR
#   (the real LibTorch's TorchConfig.cmake directory; the build's CMake generator)
set -euo pipefail
source_dir=$1 real_config=$2 generator=$3
work=$(mktemp -d)
trap '[[ -n ${KEEP:-} ]] || rm -rf "$work"' EXIT

# fake_torch DIR [CUDA_VERSION] [ABI]: a LibTorch prefix whose config is the real one, altered.
fake_torch() {
  local dir=$1 cuda=${2:-} abi=${3:-1}
  mkdir -p "$dir/share/cmake/Torch" "$dir/lib"
  {
    echo "include(\"$real_config/TorchConfig.cmake\")"
    [[ $abi == 0 ]] && echo 'set(TORCH_CXX_FLAGS "-D_GLIBCXX_USE_CXX11_ABI=0")'
    true
  } >"$dir/share/cmake/Torch/TorchConfig.cmake"
  if [[ -n $cuda ]]; then
    : >"$dir/lib/libtorch_cuda.so"
    printf "__version__ = '2.5.1+cu%s'\ncuda: Optional[str] = '%s'\n" "${cuda/./}" "$cuda" >"$dir/version.py"
  fi
}

# expect_failure NAME PATTERN CMAKE_ARGS...: configure must fail and print PATTERN.
# says LOG PATTERN: whether the log, on one line (CMake wraps long messages), matches. No pipe
# into `grep -q`: it may exit at the first match, and under pipefail the writer's SIGPIPE fails.
says() { grep -q -- "$2" <<<"$(tr -s ' \n' ' ' <"$1")"; }

expect_failure() {
  local name=$1 pattern=$2
  shift 2
  local log=$work/$name.log
  if "$@" >"$log" 2>&1; then
    echo "FAIL: $name: configure succeeded"; cat "$log"; exit 1
  fi
  if ! says "$log" "$pattern"; then
    echo "FAIL: $name: the error does not say '$pattern':"; cat "$log"; exit 1
  fi
  echo "ok: $name"
}

configure() { cmake -S "$source_dir" -B "$work/build-$1" -G "$generator" -DCT_BUILD_TESTS=OFF "${@:2}"; }

fake_torch "$work/old-abi" "" 0
expect_failure old_abi "built with the old C++ ABI (_GLIBCXX_USE_CXX11_ABI=0)" \
  configure old_abi -DCMAKE_PREFIX_PATH="$work/old-abi"
says "$work/old_abi.log" "torch >= 2.7" || { echo "FAIL: old_abi: no fix named"; exit 1; }

if command -v nvcc >/dev/null || [[ -d /usr/local/cuda ]]; then
  fake_torch "$work/cuda-future" 99.1
  expect_failure toolkit_older "is older than the CUDA 99.1 that LibTorch" \
    configure toolkit_older -DCMAKE_PREFIX_PATH="$work/cuda-future"
else
  echo "skip: toolkit_older (no CUDA toolkit on this machine)"
fi

# No toolkit: hide it in a mount namespace of its own (nothing outside the test sees this).
fake_torch "$work/cuda-12" 12.4
if unshare -m true 2>/dev/null; then
  hide=""
  for dir in /usr/local/cuda /usr/local/cuda-*; do [[ -d $dir ]] && hide+="mount -t tmpfs none $dir; "; done
  path=$(tr ':' '\n' <<<"$PATH" | grep -v cuda | paste -sd:)
  expect_failure toolkit_missing "needs the CUDA toolkit (nvcc and headers) of that version or newer" \
    unshare -m bash -c "$hide exec env -u CUDA_PATH -u CUDAToolkit_ROOT PATH=$path cmake -S $source_dir \
      -B $work/build-missing -G '$generator' -DCT_BUILD_TESTS=OFF -DCMAKE_PREFIX_PATH=$work/cuda-12"
else
  echo "skip: toolkit_missing (no mount namespaces here)"
fi
echo "configure checks passed"
