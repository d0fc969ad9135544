#!/usr/bin/env bash
# The binary loads the very libraries a LibTorch library loads: the loader resolves each soname
# once per process, so a toolkit copy (or an older NCCL) found first by the binary would also be
# what LibTorch gets. With a CUDA LibTorch: the CUDA runtime and NCCL of libtorch_cuda; in every
# build: the OpenMP runtime of libtorch_cpu (flat_adam.cpp uses OpenMP), so that one runs.
# Usage: linked_runtime.sh CLUSTERTRAIN LIBTORCH_SO [SONAME_PREFIX...]   (default: libcudart libnccl)
set -euo pipefail
binary=$1 torch_cuda=$2
shift 2
libs=("$@")
[[ ${#libs[@]} -gt 0 ]] || libs=(libcudart libnccl)
resolved() {  # resolved FILE SONAME_PREFIX: the path the loader picks for it, normalised
  local path
  path=$(ldd "$1" | awk -v lib="$2" 'index($1, lib) == 1 { print $3; exit }')
  [[ -n $path ]] && readlink -f "$path"
}
for lib in "${libs[@]}"; do
  theirs=$(resolved "$torch_cuda" "$lib" || true)
  ours=$(resolved "$binary" "$lib" || true)
  if [[ -z $theirs ]]; then
    echo "skip: libtorch_cuda loads no separate $lib (linked statically)"
    continue
  fi
  [[ -n $ours ]] || { echo "FAIL: $binary does not load $lib"; exit 1; }
  [[ $ours == "$theirs" ]] || { echo "FAIL: $binary loads $ours but LibTorch loads $theirs"; exit 1; }
  echo "ok: $lib: $ours"
done
