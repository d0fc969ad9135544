# data.sharding: static and blocks both train on 2 ranks (gzip-compressed h5py files too); auto
# picks blocks when a rank's rows exceed data.memory_budget; static over budget is refused; a
# training file truncated or deleted while blocks are streamed from it ends every rank with a
# clear error.
source "$(dirname "$0")/common.sh"
need_python
tiny_data "$WORK" 4000
T=(--config configs/tiny.yaml --set data.train="$WORK/train.h5" --set data.val="$WORK/val.h5" --set train.epochs=2)

for mode in static blocks; do
  "$MPIEXEC" -n 2 "$BIN" train "${T[@]}" --set data.sharding=$mode --set data.block_rows=100 \
    --set output.dir="$WORK/$mode" >"$WORK/$mode.txt"
  grep -q "^data: $mode" "$WORK/$mode.txt" || { cat "$WORK/$mode.txt"; fail "no '$mode' data line"; }
  [[ $(wc -l < "$WORK/$mode/metrics.jsonl") -eq 2 ]] || fail "$mode run did not finish"
done
"$MPIEXEC" -n 2 "$BIN" train "${T[@]}" --set data.memory_budget=0.001 --set output.dir="$WORK/auto" >"$WORK/auto.txt"
grep -q "data.sharding=auto: .*: blocks" "$WORK/auto.txt" || { cat "$WORK/auto.txt"; fail "auto did not pick blocks"; }
echo "ok: static, blocks and auto (over budget: blocks) train"

"$PY" - "$WORK" <<'PYEOF'
import sys, h5py
w = sys.argv[1]
with h5py.File(w + "/train.h5") as a, h5py.File(w + "/gzip.h5", "w") as f:
    f.create_dataset("input", data=a["input"][...], chunks=(50, 256), compression="gzip")
    f.create_dataset("target", data=a["target"][...], chunks=(50, 256), compression="gzip")
    f.create_dataset("labels", data=list(range(4000)))
    f.attrs["origin"] = "h5py"
PYEOF
"$MPIEXEC" -n 2 "$BIN" train "${T[@]}" --set data.train="$WORK/gzip.h5" --set data.sharding=blocks \
  --set output.dir="$WORK/gzip" >"$WORK/gzip.txt"
# 80 chunks of 50 rows: 1 MiB blocks (21 chunks) would leave 4 blocks, and a rank whose second
# block is the short last one would cut every epoch to 55% of the rows; auto keeps blocks of
# whole chunks, small enough for each rank to get many.
grep -q "blocks of 50 rows .*an epoch trains on [0-9]* of the 4000 rows (9[0-9]%)" "$WORK/gzip.txt" \
  || { cat "$WORK/gzip.txt"; fail "auto block size: not one chunk for this small file"; }
echo "ok: blocks sharding on a gzip-compressed h5py file with extra datasets"

expect_failure 2 "over the budget of" -- "$MPIEXEC" -n 2 "$BIN" train "${T[@]}" --set data.sharding=static \
  --set data.memory_budget=0.001
expect_failure 2 "every rank needs one" -- "$MPIEXEC" -n 2 "$BIN" train "${T[@]}" --set data.sharding=blocks \
  --set data.block_rows=4000

# Mid-run: once the first epoch is logged, truncate (or delete) the file the reader streams from.
# train.epochs=100000: the run cannot end before the damage, however fast the machine.
for damage in truncate delete; do
  cp "$WORK/train.h5" "$WORK/doomed.h5"
  pattern=$([[ $damage == truncate ]] && echo "was truncated from" || echo "vanished during training")
  "$MPIEXEC" -n 2 "$BIN" train "${T[@]}" --set data.train="$WORK/doomed.h5" --set data.sharding=blocks \
    --set train.epochs=100000 --set output.dir="$WORK/doomed-$damage" >"$WORK/doomed.txt" 2>&1 &
  job=$!
  wait_for_line "$WORK/doomed.txt" "^epoch " "$job"
  if [[ $damage == truncate ]]; then truncate -s 100000 "$WORK/doomed.h5"; else rm "$WORK/doomed.h5"; fi
  timeout 60 tail --pid="$job" -f /dev/null || { kill -9 "$job"; fail "still running 60 s after the $damage"; }
  wait "$job" && fail "survived: $damage"
  rc=$(grep -c -- "$pattern" "$WORK/doomed.txt" || true)
  [[ $rc -ge 1 ]] || { cat "$WORK/doomed.txt"; fail "no '$pattern' message"; }
  ! grep -qi "core dumped" "$WORK/doomed.txt" || fail "core dump"
  echo "ok: $damage during training: '$pattern'"
  rm -f "$WORK/doomed.txt"
done
