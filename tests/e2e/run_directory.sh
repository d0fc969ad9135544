# Nothing is lost: a run directory belongs to one run (refused without --resume, moved aside with
# --overwrite, locked while a run uses it; a directory of other files is none), no command
# writes over its own input, --resume auto
# skips an unreadable newest checkpoint, and a resume with other settings says so or stops.
source "$(dirname "$0")/common.sh"
need_python
tiny_data "$WORK" 1024
T=(--config configs/tiny.yaml --set data.train="$WORK/train.h5" --set data.val="$WORK/val.h5")
train2() { "$MPIEXEC" -n 2 "$BIN" train "${T[@]}" "$@"; }
sums() { (cd "$1" && md5sum config.yaml metrics.jsonl model.pt checkpoints/*); }

# 1. A directory that holds a run is refused without --resume; its files stay as they were.
train2 --set output.dir="$WORK/a" --set train.epochs=2 >/dev/null
sums "$WORK/a" >"$WORK/a.md5"
expect_failure 2 "holds another run (metrics.jsonl with 2 epochs, 2 checkpoints, best.pt, model.pt); continue it with --resume auto" \
  -- "$MPIEXEC" -n 2 "$BIN" train "${T[@]}" --set output.dir="$WORK/a" --set train.epochs=1 --set train.lr=0.01
(cd "$WORK/a" && md5sum -c --quiet "$WORK/a.md5") || fail "a refused run changed the earlier run's files"
# --overwrite moves it aside whole (never deletes it) and starts anew.
train2 --set output.dir="$WORK/a" --set train.epochs=1 --overwrite >"$WORK/overwrite.txt" 2>&1 \
  || { cat "$WORK/overwrite.txt"; fail "--overwrite failed"; }
aside=$(ls -d "$WORK"/a.replaced-* 2>/dev/null | head -1)
[[ -n "$aside" ]] || fail "--overwrite did not move the earlier run aside"
grep -q "moved the earlier run in .*/a (metrics.jsonl with 2 epochs, 2 checkpoints, best.pt, model.pt) aside to $aside" \
  "$WORK/overwrite.txt" || { cat "$WORK/overwrite.txt"; fail "--overwrite did not say where the run went"; }
(cd "$aside" && md5sum -c --quiet "$WORK/a.md5") || fail "the run moved aside is not the earlier run intact"
[[ $(wc -l <"$WORK/a/metrics.jsonl") -eq 1 && $(ls "$WORK/a/checkpoints" | tr "\n" " ") == "best.pt epoch-000001.pt " ]] \
  || fail "the new run's directory holds more than the new run"
expect_failure 2 "excludes" -- "$BIN" train "${T[@]}" --set output.dir="$WORK/a" --overwrite --resume auto
# A run that failed before its first epoch left nothing worth keeping: the directory is reused.
"$PY" -c "import h5py, numpy as np; f = h5py.File('$WORK/short.h5', 'w'); f['input'] = np.zeros((64, 256), 'f4'); f['target'] = np.zeros((63, 256), 'f4')"
expect_failure 3 "must pair row by row" -- "$MPIEXEC" -n 2 "$BIN" train "${T[@]}" \
  --set output.dir="$WORK/failed" --set data.val="$WORK/short.h5"
train2 --set output.dir="$WORK/failed" --set train.epochs=1 >/dev/null || fail "a directory without a run was refused"
# A directory of the user's own files is no run directory: a run there would write its config.yaml
# over theirs. Refused with --resume auto too, before anything is created in it.
mkdir -p "$WORK/project" && printf 'train:\n  epochs: 3  # mine\n' >"$WORK/project/config.yaml"
for resume in "" "--resume auto"; do
  expect_failure 2 "output.dir '$WORK/project' holds files that no clustertrain run wrote (config.yaml)" -- \
    "$MPIEXEC" -n 2 "$BIN" train "${T[@]}" --set output.dir="$WORK/project" $resume
done
[[ "$(ls "$WORK/project")" == "config.yaml" && "$(cat "$WORK/project/config.yaml")" == *"# mine"* ]] \
  || fail "a refused run touched the user's directory: $(ls "$WORK/project")"

# 2. Two runs into one directory: the second stops at once, naming the first's host and pid. A
# lock left by a killed run is no obstacle.
"$MPIEXEC" -n 2 "$BIN" train "${T[@]}" --set output.dir="$WORK/busy" --set train.epochs=100000 >"$WORK/busy.txt" 2>&1 &
job=$!
wait_for_line "$WORK/busy.txt" "^epoch " "$job"
pid=$(grep -o "rank 0/2 .*pid [0-9]*" "$WORK/busy.txt" | grep -o "[0-9]*$")
expect_failure 2 "in use by another clustertrain run (rank 0 on $(hostname), pid $pid, since" -- \
  "$MPIEXEC" -n 2 "$BIN" train "${T[@]}" --set output.dir="$WORK/busy" --resume auto
kill -9 "$job" "$pid" $(pgrep -f "output.dir=$WORK/busy") 2>/dev/null || true
wait "$job" 2>/dev/null || true
grep -q "pid $pid" "$WORK/busy/run.lock" || fail "run.lock does not name the holder"
train2 --set output.dir="$WORK/busy" --set train.epochs=1 --resume auto >/dev/null \
  || fail "the lock of a killed run blocked the next one"
echo "ok: a second run into a busy directory is refused; a dead run's lock is not"

# 3. No output over an input, --force or not: the same path, another spelling, a hard link.
"$BIN" make-data --out "$WORK/seed_src.h5" -n 64 -l 32 --seed 5 >/dev/null
"$PY" -c "
import h5py
with h5py.File('$WORK/seed_src.h5') as s, h5py.File('$WORK/seed.h5', 'w') as f:
    for i in range(8):
        f[f'sample{i}/input'] = s['input'][i]; f[f'sample{i}/target'] = s['target'][i]"
md5sum "$WORK/seed.h5" "$WORK/val.h5" >"$WORK/inputs.md5"
expect_failure 2 "the output '$WORK/seed.h5' is the input '$WORK/seed.h5'" -- "$BIN" convert "$WORK/seed.h5" "$WORK/seed.h5" --force
expect_failure 2 "is the input" -- "$BIN" convert "$WORK/seed.h5" "$WORK/./sub/../seed.h5" --force
ln "$WORK/val.h5" "$WORK/val_link.h5"
expect_failure 2 "is the input '$WORK/val.h5'" -- "$BIN" predict --checkpoint "$WORK/a/checkpoints/epoch-000001.pt" \
  --data "$WORK/val.h5" --out "$WORK/val_link.h5" --force
expect_failure 2 "is the input" -- "$BIN" predict --checkpoint "$WORK/a/checkpoints/epoch-000001.pt" \
  --data "$WORK/val.h5" --out "$WORK/a/checkpoints/epoch-000001.pt" --force
md5sum -c --quiet "$WORK/inputs.md5" || fail "an input was changed"

# 4. --resume auto goes on from the newest checkpoint that reads, and says which it skipped
# (best.pt, of epoch 3 too, is truncated as well: tests/e2e/resume_safety.sh covers it alone).
train2 --set output.dir="$WORK/r" --set train.epochs=3 >/dev/null
for f in epoch-000003.pt best.pt; do
  head -c 2000 "$WORK/r/checkpoints/$f" >"$WORK/cut" && mv "$WORK/cut" "$WORK/r/checkpoints/$f"
done
train2 --set output.dir="$WORK/r" --set train.epochs=3 --resume auto >"$WORK/fallback.txt" 2>&1 \
  || { cat "$WORK/fallback.txt"; fail "--resume auto did not fall back to a readable checkpoint"; }
grep -q "skipping .*epoch-000003.pt: checkpoint .* is damaged: .* (truncated" "$WORK/fallback.txt" \
  || { cat "$WORK/fallback.txt"; fail "the skipped checkpoint is not named"; }
grep -q "resumed from .*epoch-000002.pt: epoch 2 done" "$WORK/fallback.txt" || fail "did not resume from epoch 2"
for f in "$WORK"/r/checkpoints/*.pt; do head -c 100 "$f" >"$WORK/cut" && mv "$WORK/cut" "$f"; done
expect_failure 3 "none of the checkpoints in .*/r/checkpoints can be used" -- "$MPIEXEC" -n 2 "$BIN" train "${T[@]}" \
  --set output.dir="$WORK/r" --resume auto

# 5. Resuming with other settings: free ones are noted; ones that change what is trained stop the
# run (config.yaml untouched) unless allowed, and then the lr in use follows the new train.lr.
train2 --set output.dir="$WORK/c" --set train.epochs=2 >/dev/null
md5sum "$WORK/c/config.yaml" >"$WORK/c.md5"
expect_failure 2 "other settings than it was trained with (train.lr, train.seed)" -- "$MPIEXEC" -n 2 "$BIN" train \
  "${T[@]}" --set output.dir="$WORK/c" --set train.epochs=3 --set train.lr=0.004 --set train.seed=9 --resume auto
md5sum -c --quiet "$WORK/c.md5" || fail "a refused resume rewrote config.yaml"
train2 --set output.dir="$WORK/c" --set train.epochs=3 --set train.lr=0.004 --resume auto --allow-config-changes \
  >"$WORK/allowed.txt" 2>&1 || { cat "$WORK/allowed.txt"; fail "--allow-config-changes did not resume"; }
grep -q "resuming with train.lr = 0.004 (the checkpoint's run had 0.001)" "$WORK/allowed.txt" || fail "no warning for train.lr"
grep -q "resuming with train.epochs = 3 (the checkpoint's run had 2)" "$WORK/allowed.txt" || fail "train.epochs not noted"
grep -q "lr in use 4.000e-03" "$WORK/allowed.txt" || { cat "$WORK/allowed.txt"; fail "the log does not show the lr in use"; }
grep -q "lr: 0.004" "$WORK/c/config.yaml" || fail "config.yaml does not record the lr in use"
"$PY" -c "
import runs
rows = runs.records('$WORK/c')
assert [r['epoch'] for r in rows] == [1, 2, 3], rows
assert rows[1]['lr'] == 0.001 and abs(rows[2]['lr'] - 0.004) < 1e-12, [r['lr'] for r in rows]"
echo "all run directory cases ok"
