# Failures during a run: a rank killed with SIGKILL ends the whole job promptly, and a loss
# that becomes non-finite stops every rank with its own exit code.
source "$(dirname "$0")/common.sh"
tiny_data "$WORK" 4096
T=(--config configs/tiny.yaml --set data.train="$WORK/train.h5" --set data.val="$WORK/val.h5")

# Start a long run, find rank 1's pid in its start-up line, kill it.
"$MPIEXEC" -n 2 "$BIN" train "${T[@]}" --set output.dir="$WORK/killed" --set train.epochs=100000 \
  >"$WORK/killed.txt" 2>&1 &
job=$!
for _ in $(seq 100); do
  pid=$(grep -o "rank 1/2 .*pid [0-9]*" "$WORK/killed.txt" 2>/dev/null | grep -o "[0-9]*$" || true)
  [[ -n "$pid" ]] && grep -q "^epoch " "$WORK/killed.txt" && break
  sleep 0.2
done
[[ -n "$pid" ]] || { cat "$WORK/killed.txt"; fail "rank 1 never reported its pid"; }
start=$(date +%s)
kill -9 "$pid"
rc=0
timeout 60 tail --pid="$job" -f /dev/null || fail "the job still ran 60 s after rank 1 was killed"
wait "$job" || rc=$?
elapsed=$(( $(date +%s) - start ))
[[ $rc -ne 0 ]] || fail "the job exited 0 after a rank was killed"
echo "ok: rank 1 killed, job ended with exit $rc after ${elapsed} s"

expect_failure 5 "the training loss became" -- "$MPIEXEC" -n 2 "$BIN" train "${T[@]}" \
  --set output.dir="$WORK/diverged" --set train.lr=1e30
echo "all failure cases ok"
