# Bad inputs end every rank promptly with a non-zero code and one message that names the
# problem and the fix.
source "$(dirname "$0")/common.sh"
tiny_data "$WORK" 256
T=(--config configs/tiny.yaml --set data.train="$WORK/train.h5" --set data.val="$WORK/val.h5"
   --set output.dir="$WORK/run")

expect_failure 2 "unknown config key 'train.lrr'" -- "$MPIEXEC" -n 2 "$BIN" train "${T[@]}" --set train.lrr=1
hits=$(grep -c "unknown config key" "$WORK/out.txt")
[[ $hits -eq 1 ]] || fail "config error printed $hits times, expected once"
expect_failure 2 "must be a number > 0" -- "$MPIEXEC" -n 2 "$BIN" train "${T[@]}" --set train.lr=-1
expect_failure 2 "does not exist" -- "$MPIEXEC" -n 2 "$BIN" train "${T[@]}" --set data.val="$WORK/missing.h5"
expect_failure 2 "lower train.batch_size" -- "$MPIEXEC" -n 2 "$BIN" train "${T[@]}" --set train.batch_size=4096
expect_failure 3 "no dataset 'strain'" -- "$MPIEXEC" -n 2 "$BIN" train "${T[@]}" --set data.input_key=strain
echo "not hdf5" > "$WORK/bogus.h5"
expect_failure 3 "cannot open" -- "$MPIEXEC" -n 2 "$BIN" train "${T[@]}" --set data.train="$WORK/bogus.h5"
expect_failure 2 "pass --force" -- "$BIN" make-data --out "$WORK/train.h5"
expect_failure 2 "--config" -- "$BIN" train --config "$WORK/nope.yaml"

if [[ "$PY_OK" == "TRUE" ]]; then
  "$PY" -c "
import h5py, numpy as np
with h5py.File('$WORK/f64.h5', 'w') as f:
    f['input'] = np.zeros((256, 256)); f['target'] = np.zeros((256, 256))"
  expect_failure 3 "has dtype float64" -- "$MPIEXEC" -n 2 "$BIN" train "${T[@]}" --set data.train="$WORK/f64.h5"
fi
[[ ! -e "$WORK/run/model.pt" ]] || fail "a failed run left a model.pt"
echo "all error cases ok"
