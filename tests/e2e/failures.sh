# Failures during a run: a rank killed with SIGKILL, or stopped (SIGSTOP: alive but silent),
# ends the whole job promptly, and a loss that becomes non-finite stops every rank with its own
# exit code.
source "$(dirname "$0")/common.sh"
tiny_data "$WORK" 4096
T=(--config configs/tiny.yaml --set data.train="$WORK/train.h5" --set data.val="$WORK/val.h5")

# signal_rank_1 NAME SIGNAL [train flags]: start a long run, find rank 1's pid in its start-up
# line once the first epoch is logged, send it SIGNAL; the job must end non-zero within 60 s.
signal_rank_1() {
  local name=$1 signal=$2
  shift 2
  "$MPIEXEC" -n 2 "$BIN" train "${T[@]}" --set output.dir="$WORK/$name" --set train.epochs=100000 "$@" \
    >"$WORK/$name.txt" 2>&1 &
  local job=$! pid
  # train.epochs=100000 cannot end before the signal, however fast the machine.
  wait_for_line "$WORK/$name.txt" "^epoch " "$job"
  pid=$(grep -o "rank 1/2 .*pid [0-9]*" "$WORK/$name.txt" | grep -o "[0-9]*$" || true)
  [[ -n "$pid" ]] || { cat "$WORK/$name.txt"; fail "rank 1 never reported its pid"; }
  local start rc=0
  start=$(date +%s)
  kill "-$signal" "$pid"
  timeout 60 tail --pid="$job" -f /dev/null || { kill -9 "$pid"; fail "the job still ran 60 s after SIG$signal to rank 1"; }
  wait "$job" || rc=$?
  [[ $rc -ne 0 ]] || fail "the job exited 0 after SIG$signal to rank 1"
  echo "ok: SIG$signal to rank 1, job ended with exit $rc after $(( $(date +%s) - start )) s"
}
signal_rank_1 killed KILL
# A stopped rank never answers: the watchdog of the rank waiting for it ends the job.
signal_rank_1 stopped STOP --set runtime.watchdog_s=5
grep -q "error: no progress for [0-9]* s at 'training step' (rank 0" "$WORK/stopped.txt" \
  || { cat "$WORK/stopped.txt"; fail "rank 0 did not report the hang"; }

expect_failure 5 "the training loss became" -- "$MPIEXEC" -n 2 "$BIN" train "${T[@]}" \
  --set output.dir="$WORK/diverged" --set train.lr=1e30
# Checked every step (opted in): the error names the step, before the epoch ends.
expect_failure 5 "non-finite on some rank in epoch 1 step 2;" -- "$MPIEXEC" -n 2 "$BIN" train "${T[@]}" \
  --set output.dir="$WORK/checked" --set train.lr=1e30 --set train.nan_check_every=1
# Skip: the non-finite steps are not applied and are counted; the weights the first (finite) step
# blew up stay non-finite, so validation stops the run after recording the epoch.
expect_failure 5 "the validation loss became" -- "$MPIEXEC" -n 2 "$BIN" train "${T[@]}" \
  --set output.dir="$WORK/skipped" --set train.lr=1e30 --set train.nan_check_every=1 --set train.on_nonfinite=skip
grep -q "step skipped (train.on_nonfinite=skip)" "$WORK/out.txt" || fail "no skip warning"
grep -q '"skipped_steps":63,' "$WORK/skipped/metrics.jsonl" || { cat "$WORK/skipped/metrics.jsonl"; fail "skipped_steps"; }
echo "all failure cases ok"
