# Preemption: SIGUSR1 (Slurm's --signal) to every rank stops all of them after the same step,
# writes a mid-epoch checkpoint and exits 75; --resume auto then continues exactly as a run
# that was never interrupted (losses, lrs and weights bit for bit) -- with the rows in memory
# (data.sharding=static) and streamed in blocks (the reader restarts inside the epoch).
# CT_TEST_HOLD_AT_STEP holds the run at a step inside epoch 3 until the signal comes, so the
# signal lands at the same step on a fast machine and on a loaded one.
source "$(dirname "$0")/common.sh"
need_python
tiny_data "$WORK" 4096
HOLD=150  # 64 steps an epoch here (4096 rows, 2 ranks x 32): epoch 3, step 22
case_sharding() {
  T=(--config configs/tiny.yaml --set data.train="$WORK/train.h5" --set data.val="$WORK/val.h5"
     --set train.epochs=8 --set output.checkpoint_every=0 --set data.sharding=$1 --set data.block_rows=256
     --set train.plateau.patience=1 --set train.plateau.threshold=0.15)  # an lr drop after epoch 7: resumed plateau state

  "$MPIEXEC" -n 2 "$BIN" train "${T[@]}" --set output.dir="$WORK/$1-straight" >/dev/null

  preempt_at_step $HOLD "$WORK/$1-pre.txt" -- "${T[@]}" --set output.dir="$WORK/$1-pre"
  grep -E "preempted|epoch " "$WORK/$1-pre.txt" | tail -3
  ls "$WORK/$1-pre/checkpoints" | contains "step-" || fail "no mid-epoch checkpoint was written"

  # Resumed with the hold still set: a run resumed at that very step does not hold again.
  CT_TEST_HOLD_AT_STEP=$HOLD "$MPIEXEC" -n 2 "$BIN" train "${T[@]}" \
    --set output.dir="$WORK/$1-pre" --resume auto | grep "resumed from .*step-" \
    || fail "the resumed run did not start from the mid-epoch checkpoint"
  "$PY" - "$WORK" "$1" <<'PYEOF'
import sys
import runs
w, mode = sys.argv[1], sys.argv[2]
straight, pre = f"{w}/{mode}-straight", f"{w}/{mode}-pre"
assert len({r["lr"] for r in runs.records(straight)}) > 1, "no lr drop: the plateau state was not exercised"
keys = ["epoch", "global_step", "train_loss", "train_mse", "train_kl", "val_loss", "val_mse", "val_kl", "lr"]
runs.same_records(straight, pre, keys, epochs=8)
runs.same_weights(straight, pre)
print(f"ok ({mode}): preempted and resumed run equals the uninterrupted run bit for bit")
PYEOF
}

case_sharding static
case_sharding blocks

# SIGTERM to mpirun itself (a batch system ending the job step): mpirun forwards it, the ranks
# checkpoint and exit 75, but mpirun exits 1. Rank 0's PREEMPTED marker in the run directory
# names the checkpoint; launch/mpirun.sh turns it into exit 75, and the next run removes it.
# mpirun sent SIGTERM gives its ranks odls_base_sigkill_timeout (1 s) after forwarding it before
# SIGKILL (docs/run_directory.md): 5 s here, so that a loaded machine writes the checkpoint in time.
T=(--config configs/tiny.yaml --set data.train="$WORK/train.h5" --set data.val="$WORK/val.h5" --set train.epochs=3)
OMPI_MCA_odls_base_sigkill_timeout=5 CT_RANKS=2 CT_BIN="$BIN" CT_TEST_HOLD_AT_STEP=40 bash launch/mpirun.sh train "${T[@]}" \
  --set output.dir="$WORK/term" >"$WORK/term.txt" 2>&1 &
job=$!
wait_for_line "$WORK/term.txt" "held at global step 40" "$job"
launcher=$(pgrep -P "$job" -x mpirun || pgrep -P "$job" -x mpiexec) || fail "mpirun.sh started no mpirun"
kill -TERM "$launcher"
rc=0
wait "$job" || rc=$?
[[ $rc -eq 75 ]] || { cat "$WORK/term.txt"; fail "launch/mpirun.sh exited $rc after SIGTERM to mpirun, expected 75"; }
grep -q "mpirun.sh: mpirun exited with [0-9]*, but the ranks stopped for preemption" "$WORK/term.txt" \
  || { cat "$WORK/term.txt"; fail "mpirun.sh did not say why it exits 75"; }
# 64 steps an epoch: held at step 40 of epoch 1.
checkpoint=$(sed -n 's/^checkpoint: //p' "$WORK/term/PREEMPTED")
[[ "$checkpoint" == "$WORK/term/checkpoints/epoch-000000.step-000040.pt" && -s "$checkpoint" ]] \
  || { cat "$WORK/term/PREEMPTED"; fail "PREEMPTED does not name the checkpoint written"; }
"$MPIEXEC" -n 2 "$BIN" train "${T[@]}" --set output.dir="$WORK/term" --resume auto >"$WORK/term-resumed.txt" 2>&1 \
  || { cat "$WORK/term-resumed.txt"; fail "the run resumed after SIGTERM to mpirun failed"; }
grep -q "resumed from $checkpoint" "$WORK/term-resumed.txt" \
  || { cat "$WORK/term-resumed.txt"; fail "the run stopped by SIGTERM to mpirun did not resume from its checkpoint"; }
[[ ! -e "$WORK/term/PREEMPTED" ]] || fail "the resumed run left PREEMPTED in place"
echo "ok: SIGTERM to mpirun: checkpoint, PREEMPTED, exit 75 from launch/mpirun.sh, resumed"

# Ctrl-C (SIGINT) on a run in a terminal: the same checkpoint at a step boundary, but exit 130 and
# no PREEMPTED marker (the user stopped it: nothing to requeue); --resume auto continues it.
# env --default-signal: a script starts its background jobs with SIGINT ignored, as a shell does.
env --default-signal=INT CT_TEST_HOLD_AT_STEP=40 "$BIN" train "${T[@]}" --set output.dir="$WORK/int" >"$WORK/int.txt" 2>&1 &
job=$!
wait_for_line "$WORK/int.txt" "held at global step 40" "$job"
kill -INT "$job"
rc=0
wait "$job" || rc=$?
[[ $rc -eq 130 ]] || { cat "$WORK/int.txt"; fail "SIGINT: exit $rc, expected 130"; }
grep -q "interrupted (SIGINT) in epoch 1 after step 40: checkpoint $WORK/int/checkpoints/epoch-000000.step-000040.pt written; continue the run with --resume auto" \
  "$WORK/int.txt" || { cat "$WORK/int.txt"; fail "SIGINT: no checkpoint message"; }
[[ ! -e "$WORK/int/PREEMPTED" ]] || fail "SIGINT left a requeue marker"
"$BIN" train "${T[@]}" --set output.dir="$WORK/int" --resume auto | contains "resumed from $WORK/int/checkpoints/epoch-000000.step-000040.pt" \
  || fail "the interrupted run did not resume from its checkpoint"
echo "ok: Ctrl-C: checkpoint, exit 130, no requeue marker, resumed"
