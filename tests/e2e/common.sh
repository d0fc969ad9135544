# Shared by the end-to-end tests. Arguments: BINARY PYTHON PYTHON_OK MPIEXEC
set -euo pipefail
BIN=$1
PY=$2
PY_OK=$3
MPIEXEC=${4:-mpiexec}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/ct-e2e.XXXXXX")
# The Python helpers every test imports: runs.py (reading and comparing run directories) and
# reference_models.py (the built-in models in PyTorch).
E2E_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
export PYTHONPATH="$E2E_DIR${PYTHONPATH:+:$PYTHONPATH}"
trap 'rm -rf "$WORK"' EXIT

need_python() {
  if [[ "$PY_OK" != "TRUE" ]]; then
    echo "skipped: needs python3 with torch, h5py and numpy (apt-get install python3-torch python3-h5py)"
    exit 77
  fi
}

fail() { echo "FAIL: $*" >&2; exit 1; }

# A command that does not exist (a helper renamed away) ends the test, even inside $(...), where
# it would only leave an empty string, equal to another empty string in a comparison.
command_not_found_handle() {
  echo "FAIL: command not found: $1 (a test helper that no longer exists?)" >&2
  kill -TERM $$
  return 127
}

# cmd | contains PATTERN: whether a line of cmd's output matches. It reads to the end: `grep -q`
# would exit at the first match, and a run still writing would then die of SIGPIPE, which
# pipefail counts as the pipeline failing (a race that only a fast or a loaded machine shows).
contains() {
  local text
  text=$(cat)
  grep -q -- "$1" <<<"$text"
}

# tiny_data DIR ROWS: training and validation files of short waveforms.
tiny_data() {
  "$MPIEXEC" -n 2 "$BIN" make-data --out "$1/train.h5" -n "$2" -l 256 --seed 11 >/dev/null
  "$BIN" make-data --out "$1/val.h5" -n 512 -l 256 --seed 12 >/dev/null
}

# wait_for_line FILE PATTERN PID [SECONDS]: returns once FILE has a line matching PATTERN; fails
# if process PID ends first or SECONDS (default 300) pass. The bound only catches a hang: tests
# wait for an event (a log line), never for a guessed time, so a slow machine passes too.
wait_for_line() {
  local file=$1 pattern=$2 pid=$3 limit=${4:-300}
  local deadline=$(( SECONDS + limit ))
  until grep -q -- "$pattern" "$file" 2>/dev/null; do
    if ! kill -0 "$pid" 2>/dev/null; then
      grep -q -- "$pattern" "$file" 2>/dev/null && return 0
      cat "$file"; fail "the run ended before it printed '$pattern'"
    fi
    (( SECONDS < deadline )) || { cat "$file"; fail "no '$pattern' after $limit s"; }
    sleep 0.1
  done
}

# preempt_at_step STEP LOG -- TRAIN_ARGS...: a 2-rank `train` held at global step STEP
# (CT_TEST_HOLD_AT_STEP) until both ranks get SIGUSR1, which must stop it with exit 75 (the
# mid-epoch checkpoint written). The signal waits for the "held at" line, never for a time.
preempt_at_step() {
  local step=$1 log=$2 pids rc=0
  shift 3
  CT_TEST_HOLD_AT_STEP=$step "$MPIEXEC" -n 2 "$BIN" train "$@" >"$log" 2>&1 &
  local job=$!
  wait_for_line "$log" "held at global step $step" "$job"
  pids=$(grep -o "pid [0-9]*" "$log" | grep -o "[0-9]*")
  [[ $(echo "$pids" | wc -w) -eq 2 ]] || { cat "$log"; fail "could not find both ranks' pids"; }
  kill -USR1 $pids
  wait "$job" || rc=$?
  [[ $rc -eq 75 ]] || { cat "$log"; fail "exit code $rc after SIGUSR1, expected 75"; }
}

# expect_failure CODE PATTERN -- command...: the command exits with CODE and prints PATTERN
# exactly once (one message, from rank 0), on stderr or stdout, with no core dump. These fail
# at start-up or within a step; 90 s (a loaded machine's start-up is a few seconds) means a hang.
expect_failure() {
  local code=$1 pattern=$2
  shift 3
  local out="$WORK/out.txt" rc=0
  timeout 90 "$@" >"$out" 2>&1 || rc=$?
  [[ $rc -ne 124 ]] || fail "timed out (a rank hung): $*"
  [[ $rc -eq $code ]] || { cat "$out"; fail "exit code $rc, expected $code: $*"; }
  local hits
  hits=$(grep -c -- "$pattern" "$out" || true)
  [[ $hits -eq 1 ]] || { cat "$out"; fail "'$pattern' printed $hits times, expected once: $*"; }
  ! grep -qi "core dumped" "$out" || { cat "$out"; fail "core dump: $*"; }
  # A user never sees a C++ stack trace or a place in our source.
  ! grep -qE "Exception raised from|frame #[0-9]|src/[a-z_/]+\.(cpp|h):[0-9]" "$out" \
    || { cat "$out"; fail "a stack trace or source location reached the user: $*"; }
  echo "ok: exit $rc, '$pattern' ($hits line(s)): ${*: -2}"
}
