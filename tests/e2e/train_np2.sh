# Trains the tiny config on 2 ranks and checks the run directory with Python: the validation
# loss fell, metrics.jsonl has every field, model.pt loads into the equivalent torch module.
source "$(dirname "$0")/common.sh"
need_python
tiny_data "$WORK" 2048
"$MPIEXEC" -n 2 "$BIN" train --config configs/tiny.yaml \
  --set data.train="$WORK/train.h5" --set data.val="$WORK/val.h5" --set output.dir="$WORK/run" | tee "$WORK/console.txt"
grep -q "epoch   6/6" "$WORK/console.txt" || fail "rank 0 did not print one line per epoch"
[[ $(grep -c "^epoch " "$WORK/console.txt") -eq 6 ]] || fail "expected exactly 6 epoch lines (rank 0 only)"
for f in config.yaml metrics.jsonl model.pt logs/rank-0.log logs/rank-1.log; do
  [[ -s "$WORK/run/$f" ]] || fail "run directory lacks $f"
done
"$PY" "$(dirname "$0")/check_run.py" "$WORK/run" --epochs 6 --length 256 --hidden 128 64 --latent 8 --world-size 2
