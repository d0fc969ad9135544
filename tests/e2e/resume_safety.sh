# --resume auto, which every Slurm requeue passes, never starts a run with results over: it
# resumes from checkpoints/best.pt when that is the newest intact checkpoint, refuses (exit 2)
# when no checkpoint is left, and skips checkpoints whose bytes were damaged after they were
# written (each ZIP record's CRC-32). Misplaced files in a run directory, a state dict given to
# --resume, and --overwrite of a directory that holds an input are one clear message each.
source "$(dirname "$0")/common.sh"
need_python
tiny_data "$WORK" 1024
T=(--config configs/tiny.yaml --set data.train="$WORK/train.h5" --set data.val="$WORK/val.h5")
train2() { "$MPIEXEC" -n 2 "$BIN" train "${T[@]}" "$@"; }
records() { "$PY" "$E2E_DIR/runs.py" count "$1"; }

# flip FILE RECORD: one byte inside the data of the ZIP record whose name ends with RECORD.
flip() {
  "$PY" - "$1" "$2" <<'PY'
import struct, sys, zipfile
path, tail = sys.argv[1], sys.argv[2]
info = next(i for i in zipfile.ZipFile(path).infolist() if i.filename.endswith(tail))
with open(path, "r+b") as f:
    f.seek(info.header_offset)
    header = f.read(30)
    name, extra = struct.unpack("<HH", header[26:30])
    at = info.header_offset + 30 + name + extra + info.compress_size // 2
    f.seek(at)
    byte = f.read(1)[0]
    f.seek(at)
    f.write(bytes([byte ^ 0x10]))
PY
}

# 1. A finished run whose epoch checkpoints were deleted: best.pt is the newest full checkpoint
# (lr 0.05 makes the best epoch an early one, so later epochs are trained again).
train2 --set output.dir="$WORK/done" --set train.epochs=6 --set train.lr=0.05 >/dev/null
best=$("$PY" -c "import runs; print(max(r['best_epoch'] for r in runs.records('$WORK/done')))")
md5sum "$WORK/done/model.pt" >"$WORK/model.md5"
rm "$WORK"/done/checkpoints/epoch-*.pt
train2 --set output.dir="$WORK/done" --set train.epochs=6 --set train.lr=0.05 --resume auto >"$WORK/best.txt" 2>&1 \
  || { cat "$WORK/best.txt"; fail "--resume auto with only checkpoints/best.pt left failed"; }
grep -q "resuming from .*/done/checkpoints/best.pt (epoch $best), the newest intact checkpoint (no epoch checkpoint is left" \
  "$WORK/best.txt" || { cat "$WORK/best.txt"; fail "did not say that it resumes from checkpoints/best.pt"; }
if (( best < 6 )); then
  grep -q "epochs $(( best + 1 ))-6 of metrics.jsonl are trained again" "$WORK/best.txt" || fail "did not say which epochs run again"
fi
grep -q "resumed from .*/checkpoints/best.pt: epoch $best done" "$WORK/best.txt" || fail "did not resume at epoch $best"
[[ $(records "$WORK/done") -eq 6 ]] || fail "metrics.jsonl does not hold 6 epochs after the resume"
# On CPU with the same world size a resume is exact: the model is the one the first run wrote.
md5sum -c --quiet "$WORK/model.md5" || fail "the resumed run's model.pt differs from the uninterrupted run's"
echo "ok: --resume auto with only best.pt left resumes from it (epoch $best)"

# A run killed after its epochs with output.checkpoint_every=0 and no checkpoint at all left:
# refused, and nothing in the directory changes.
rm "$WORK"/done/checkpoints/*.pt
(cd "$WORK/done" && md5sum metrics.jsonl metrics.csv model.pt best.pt) >"$WORK/done.md5"
expect_failure 2 "run directory '$WORK/done' holds a run's results (metrics.jsonl with 6 epochs, best.pt, model.pt) but no checkpoint to resume from" \
  -- "$MPIEXEC" -n 2 "$BIN" train "${T[@]}" --set output.dir="$WORK/done" --set train.epochs=6 --set train.lr=0.05 --resume auto
(cd "$WORK/done" && md5sum -c --quiet "$WORK/done.md5") || fail "a refused --resume auto changed the run's results"
# A directory without results still starts from scratch.
train2 --set output.dir="$WORK/new" --set train.epochs=1 --resume auto | contains "starting from scratch" \
  || fail "--resume auto in a new directory should start from scratch"

# 2. Damaged bytes: a flipped byte in a tensor (stored record) or in the code (deflated record)
# of the newest checkpoints: both are skipped, naming the record, and the run resumes from the
# newest intact one. checkpoints/best.pt, damaged too, is skipped as well.
train2 --set output.dir="$WORK/r" --set train.epochs=4 --set output.keep=4 >/dev/null
flip "$WORK/r/checkpoints/epoch-000004.pt" data/0
flip "$WORK/r/checkpoints/epoch-000003.pt" code/__torch__.py
flip "$WORK/r/checkpoints/best.pt" data/1
train2 --set output.dir="$WORK/r" --set train.epochs=4 --set output.keep=4 --resume auto >"$WORK/flip.txt" 2>&1 \
  || { cat "$WORK/flip.txt"; fail "--resume auto did not fall back past damaged checkpoints"; }
grep -q "skipping .*epoch-000004.pt: checkpoint .* is damaged: record '[^']*/data/0' fails its CRC-32 check" "$WORK/flip.txt" \
  || { cat "$WORK/flip.txt"; fail "the damaged epoch-4 checkpoint was not skipped by its CRC"; }
grep -q "skipping .*epoch-000003.pt: .*code/__torch__.py' fails its CRC-32 check" "$WORK/flip.txt" \
  || { cat "$WORK/flip.txt"; fail "the damaged deflated record was not found"; }
grep -q "skipping .*checkpoints/best.pt: .*fails its CRC-32 check" "$WORK/flip.txt" || fail "a damaged best.pt was not skipped"
grep -q "resumed from .*epoch-000002.pt: epoch 2 done" "$WORK/flip.txt" || fail "did not resume from epoch 2"
# An explicit --resume of a damaged checkpoint, and predict from one, stop with exit 3.
flip "$WORK/r/checkpoints/epoch-000002.pt" data/0
expect_failure 3 "epoch-000002.pt' is damaged: record .* fails its CRC-32 check" -- "$MPIEXEC" -n 2 "$BIN" train "${T[@]}" \
  --set output.dir="$WORK/r" --set train.epochs=4 --resume "$WORK/r/checkpoints/epoch-000002.pt"
expect_failure 3 "is damaged" -- "$BIN" predict --checkpoint "$WORK/r/checkpoints/epoch-000002.pt" \
  --data "$WORK/val.h5" --out "$WORK/pred.h5"
echo "ok: damaged checkpoints are skipped or refused by their CRC-32"

# 3. --resume of best.pt (a state dict) names the full checkpoint to use.
train2 --set output.dir="$WORK/s" --set train.epochs=1 >/dev/null
expect_failure 2 "best.pt holds a model's weights (a state dict, as best.pt and model.pt do), not a checkpoint.*$WORK/s/checkpoints/best.pt" \
  -- "$MPIEXEC" -n 2 "$BIN" train "${T[@]}" --set output.dir="$WORK/s" --set train.epochs=2 --resume "$WORK/s/best.pt"
expect_failure 2 "resume $WORK/none.pt: '$WORK/none.pt' does not exist" -- "$MPIEXEC" -n 2 "$BIN" train "${T[@]}" \
  --set output.dir="$WORK/s" --resume "$WORK/none.pt"

# 4. A file where the run's folders belong: one message, exit 2.
for folder in checkpoints logs; do
  mkdir -p "$WORK/f-$folder" && echo x >"$WORK/f-$folder/$folder"
  expect_failure 2 "cannot create the run's [a-z]* folder '$WORK/f-$folder/$folder': a file of that name is in the way" \
    -- "$MPIEXEC" -n 2 "$BIN" train "${T[@]}" --set output.dir="$WORK/f-$folder" --set train.epochs=1
done

# 5. --overwrite of a run directory that holds the run's own data: refused before anything moves.
mkdir -p "$WORK/inside"
train2 --set output.dir="$WORK/inside" --set train.epochs=1 >/dev/null
cp "$WORK/train.h5" "$WORK/inside/train.h5"
expect_failure 2 "the input '$WORK/inside/train.h5' (data.train) lies inside it" -- "$MPIEXEC" -n 2 "$BIN" train "${T[@]}" \
  --set data.train="$WORK/inside/train.h5" --set output.dir="$WORK/inside" --set train.epochs=1 --overwrite
[[ -f "$WORK/inside/train.h5" && -z $(ls -d "$WORK"/inside.replaced-* 2>/dev/null) ]] || fail "--overwrite moved the data"
echo "all resume safety cases ok"
