# The dataset contract: make-data's output does not depend on the rank count, and files that
# h5py writes (gzip-compressed and chunked, or contiguous) train.
source "$(dirname "$0")/common.sh"
need_python
"$BIN" make-data --out "$WORK/one.h5" -n 999 -l 128 --seed 3 >/dev/null
"$MPIEXEC" -n 2 "$BIN" make-data --out "$WORK/two.h5" -n 999 -l 128 --seed 3 >/dev/null
"$BIN" info "$WORK/two.h5" | tee "$WORK/info.txt"
grep -q "float32 \[999, 128\]" "$WORK/info.txt" || fail "info does not show the shape"
"$PY" - "$WORK" <<'PYEOF'
import sys, h5py, numpy as np
w = sys.argv[1]
with h5py.File(w + "/one.h5") as a, h5py.File(w + "/two.h5") as b:
    for k in ("input", "target"):
        assert np.array_equal(a[k][...], b[k][...]), k
        assert a[k].dtype == np.float32 and a[k].chunks is not None
    x, y = a["input"][...], a["target"][...]
with h5py.File(w + "/gzip.h5", "w") as f:
    f.create_dataset("strain", data=x, chunks=(64, 128), compression="gzip")
    f.create_dataset("clean", data=y, chunks=(64, 128), compression="gzip")
with h5py.File(w + "/contiguous.h5", "w") as f:
    f["strain"] = x[:300]; f["clean"] = y[:300]
print("ok: 1-rank and 2-rank make-data files are identical")
PYEOF
"$BIN" info "$WORK/gzip.h5" | grep -q "compression: gzip" || fail "info does not report gzip"
"$MPIEXEC" -n 2 "$BIN" train --config configs/tiny.yaml --set data.train="$WORK/gzip.h5" \
  --set data.val="$WORK/contiguous.h5" --set data.input_key=strain --set data.target_key=clean \
  --set train.epochs=2 --set output.dir="$WORK/run" >/dev/null
[[ $(wc -l < "$WORK/run/metrics.jsonl") -eq 2 ]] || fail "training on h5py files did not complete"
echo "ok: trained on gzip-compressed and contiguous h5py files"
