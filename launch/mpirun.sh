#!/usr/bin/env bash
# Single-node launcher: runs `build/clustertrain ARGS...` under mpirun with one rank per GPU,
# or, without GPUs, one rank per NUMA domain (CT_RANKS=N overrides). Passes --bind-to none,
# because each rank binds itself with hwloc (to its GPU's cores, or its share of the node);
# handles running as root; prints the command it runs. Exits 75 when the ranks stopped for
# preemption with a checkpoint written (SIGUSR1 or SIGTERM to this script or to mpirun).
#   launch/mpirun.sh train --config configs/gw_vae.yaml [--set key=value ...]
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
source "$ROOT/launch/mpi_env.sh"
BIN=${CT_BIN:-$ROOT/build/clustertrain}
[[ -x "$BIN" ]] || { echo "mpirun.sh: $BIN not found; build it with launch/setup.sh" >&2; exit 2; }

count_gpus() {
  if [[ -n "${CUDA_VISIBLE_DEVICES:-}" ]]; then
    tr ',' '\n' <<<"$CUDA_VISIBLE_DEVICES" | grep -c .
  elif command -v nvidia-smi >/dev/null 2>&1; then
    nvidia-smi -L 2>/dev/null | grep -c "^GPU" || true
  else
    echo 0
  fi
}
count_numa() { ls -d /sys/devices/system/node/node[0-9]* 2>/dev/null | wc -l; }

if [[ -n "${CT_RANKS:-}" ]]; then
  RANKS=$CT_RANKS why="CT_RANKS"
elif (( $(count_gpus) > 0 )); then
  RANKS=$(count_gpus) why="one per GPU"
else
  RANKS=$(( $(count_numa) > 0 ? $(count_numa) : 1 )) why="no GPU: one per NUMA domain"
fi
CMD=(mpirun -np "$RANKS" $(mpi_flags_for "$RANKS") "$BIN" "$@")
echo "mpirun.sh: $RANKS rank(s) ($why): ${CMD[*]}" >&2
# mpirun sent SIGTERM ends the ranks with it: they checkpoint and exit 75, but mpirun itself
# exits 1 (SIGUSR1, which it only forwards, gives 75). Rank 0 writes this marker once the
# checkpoint is on disk, so that the exit code says "preempted" (75) either way.
export CT_PREEMPTED_MARKER="${TMPDIR:-/tmp}/clustertrain-preempted.$$"
rm -f "$CT_PREEMPTED_MARKER"
trap 'rm -f "$CT_PREEMPTED_MARKER"' EXIT
trap 'kill -TERM "$launcher" 2>/dev/null' TERM
trap 'kill -USR1 "$launcher" 2>/dev/null' USR1
"${CMD[@]}" &
launcher=$!
rc=0
# A trapped signal interrupts wait: wait again until mpirun has really ended.
while wait "$launcher"; rc=$?; kill -0 "$launcher" 2>/dev/null; do :; done
if [[ $rc -ne 75 && -f "$CT_PREEMPTED_MARKER" ]]; then
  echo "mpirun.sh: mpirun exited with $rc, but the ranks stopped for preemption and wrote" \
       "$(sed -n 's/^checkpoint: //p' "$CT_PREEMPTED_MARKER"): exit 75" >&2
  rc=75
fi
exit "$rc"
