# clustertrain convert: the seed's one-group-per-sample layout (written by h5py, float64) to the
# contiguous layout, on 2 ranks, verified sample by sample; the output trains; a corrupted or
# malformed file is caught with a clear error.
source "$(dirname "$0")/common.sh"
need_python
tiny_data "$WORK" 1500
"$PY" "$(dirname "$0")/../../bench/make_seed_layout.py" "$WORK/train.h5" "$WORK/seed.h5" --dtype float64
"$MPIEXEC" -n 2 "$BIN" convert "$WORK/seed.h5" "$WORK/converted.h5" --verify | tee "$WORK/convert.txt"
grep -q "verified all 1500 samples" "$WORK/convert.txt" || fail "convert --verify did not report"
grep -q "\[####################\] 100.0%" "$WORK/convert.txt" || fail "no progress bar"
"$PY" - "$WORK" <<'PYEOF'
import sys, h5py, numpy as np
w = sys.argv[1]
with h5py.File(w + "/train.h5") as a, h5py.File(w + "/converted.h5") as b:
    for k in ("input", "target"):
        assert b[k].dtype == np.float32 and b[k].chunks is not None and b[k].chunks[0] > 1, b[k].chunks
        assert np.array_equal(a[k][...], b[k][...]), k
print("ok: converted rows equal the original rows, float32, chunked")
PYEOF
[[ ! -e "$WORK/converted.h5.tmp" ]] || fail "temporary file left behind"
"$MPIEXEC" -n 2 "$BIN" train --config configs/tiny.yaml --set data.train="$WORK/converted.h5" \
  --set data.val="$WORK/val.h5" --set train.epochs=1 --set output.dir="$WORK/run" >/dev/null
[[ -s "$WORK/run/model.pt" ]] || fail "training on the converted file did not finish"
echo "ok: trained on the converted file"

# A changed value is found by --verify-only; the output is not overwritten without --force.
"$PY" -c "import h5py,sys; f=h5py.File(sys.argv[1],'r+'); f['target'][17,3] += 1" "$WORK/converted.h5"
expect_failure 3 "verify: sample 17 of" -- "$MPIEXEC" -n 2 "$BIN" convert "$WORK/seed.h5" "$WORK/converted.h5" --verify-only
expect_failure 2 "pass --force" -- "$BIN" convert "$WORK/seed.h5" "$WORK/converted.h5"
expect_failure 2 "directory .*/no_dir. does not exist" -- "$MPIEXEC" -n 2 "$BIN" convert "$WORK/seed.h5" "$WORK/no_dir/x.h5"
expect_failure 3 "has no sample{i} groups" -- "$MPIEXEC" -n 2 "$BIN" convert "$WORK/train.h5" "$WORK/x.h5"
"$PY" - "$WORK" <<'PYEOF'
import sys, h5py, numpy as np
w = sys.argv[1]
with h5py.File(w + "/gap.h5", "w") as f:
    for i in (0, 1, 3):
        f[f"sample{i}/input"] = np.zeros(8); f[f"sample{i}/target"] = np.zeros(8)
with h5py.File(w + "/ragged.h5", "w") as f:
    for i in range(4):
        f[f"sample{i}/input"] = np.zeros(8 if i != 2 else 9); f[f"sample{i}/target"] = np.zeros(8)
PYEOF
expect_failure 3 "no dataset 'sample2/input' but 3 sample groups" -- "$BIN" convert "$WORK/gap.h5" "$WORK/x.h5"
expect_failure 3 "sample2/input has shape \[9\] but sample0/input has \[8\]" -- \
  "$MPIEXEC" -n 2 "$BIN" convert "$WORK/ragged.h5" "$WORK/x.h5"
[[ ! -e "$WORK/x.h5" ]] || fail "a failed convert left its output"

# Streaming: peak memory does not grow with the number of samples. 15x the samples of short rows
# (the data itself is a few MB): HDF5 used to keep every sample's object header, +6.5 KB each.
for n in 800 12000; do
  "$BIN" make-data --out "$WORK/short$n.h5" -n $n -l 64 >/dev/null
  "$PY" "$(dirname "$0")/../../bench/make_seed_layout.py" "$WORK/short$n.h5" "$WORK/seed$n.h5"
  /usr/bin/time -f "%M" -o "$WORK/rss$n.txt" "$BIN" convert "$WORK/seed$n.h5" "$WORK/out$n.h5" --verify --no-progress \
    >/dev/null || fail "convert of $n samples"
done
small=$(tail -1 "$WORK/rss800.txt") large=$(tail -1 "$WORK/rss12000.txt")
echo "convert peak memory: 800 samples $((small / 1024)) MiB, 12000 samples $((large / 1024)) MiB"
(( large - small < 32 * 1024 )) || fail "convert's memory grew by $(((large - small) / 1024)) MiB for 15x the samples"
echo "ok: convert's memory stays flat in the number of samples"
