# Trains the tiny config on 2 ranks and checks the run directory with Python: the validation
# loss fell, metrics.jsonl has every field, model.pt loads into the equivalent torch module.
source "$(dirname "$0")/common.sh"
need_python
tiny_data "$WORK" 2048
"$MPIEXEC" -n 2 "$BIN" train --config configs/tiny.yaml \
  --set data.train="$WORK/train.h5" --set data.val="$WORK/val.h5" --set output.dir="$WORK/run" --set output.log_every=10 | tee "$WORK/console.txt"
! grep -q $'\r' "$WORK/console.txt" || fail "control characters in non-terminal output"
grep -q "epoch 1/6 batch 10/32" "$WORK/console.txt" || fail "no progress line every 10 batches"
grep -q "epoch   6/6" "$WORK/console.txt" || fail "rank 0 did not print one line per epoch"
[[ $(grep -c "^epoch " "$WORK/console.txt") -eq 6 ]] || fail "expected exactly 6 epoch lines (rank 0 only)"
for f in config.yaml metrics.jsonl model.pt logs/rank-0.log logs/rank-1.log; do
  [[ -s "$WORK/run/$f" ]] || fail "run directory lacks $f"
done
"$PY" "$(dirname "$0")/check_run.py" "$WORK/run" --epochs 6 --length 256 --hidden 128 64 --latent 8 --world-size 2

# Gradient accumulation: 16 rows x 2 micro-batches x 2 ranks = a global batch of 64, and the
# lr derivation says so. Early stop: with a 50% improvement threshold no epoch after the
# first improves, so patience 2 stops after epoch 3.
"$MPIEXEC" -n 2 "$BIN" train --config configs/tiny.yaml \
  --set data.train="$WORK/train.h5" --set data.val="$WORK/val.h5" --set output.dir="$WORK/acc" \
  --set train.batch_size=16 --set train.accumulation_steps=2 --set train.epochs=6 \
  --set train.early_stop_patience=2 --set train.plateau.threshold=0.5 | tee "$WORK/acc.txt"
grep -q "global batch 64 = 16 x 2 ranks x 2" "$WORK/acc.txt" || fail "lr derivation lacks the accumulation"
grep -q "early stop after epoch 3" "$WORK/acc.txt" || fail "early stop did not happen after epoch 3"
"$PY" - "$WORK/acc" <<'PYEOF'
import sys
import runs
rows = runs.records(sys.argv[1])
assert len(rows) == 3, len(rows)
assert all(r["global_batch"] == 64 for r in rows), rows
assert rows[0]["global_step"] == 2048 // 64, rows[0]["global_step"]   # optimizer steps, not micro-batches
print("ok: accumulation and early stop")
PYEOF
