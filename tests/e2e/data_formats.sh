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

# A virtual dataset (VDS) over two part files, from another working directory than the files'
# (HDF5 finds the parts beside the VDS): `info` says what it is, and it trains as data.train in
# either sharding and as data.val (parallel HDF5 cannot read a VDS collectively: each rank reads
# its own rows). float16 rows are converted as they are read.
"$PY" - "$WORK" <<'PYEOF'
import sys, h5py, numpy as np
w = sys.argv[1]
with h5py.File(w + "/one.h5") as a:
    x, y = a["input"][...], a["target"][...]
for i, part in enumerate((slice(0, 500), slice(500, 999))):
    with h5py.File(f"{w}/part{i}.h5", "w") as f:
        f["input"] = x[part]; f["target"] = y[part]
with h5py.File(w + "/vds.h5", "w") as f:
    for key in ("input", "target"):
        layout = h5py.VirtualLayout(shape=(999, 128), dtype="f4")
        layout[0:500] = h5py.VirtualSource("part0.h5", key, shape=(500, 128))
        layout[500:999] = h5py.VirtualSource("part1.h5", key, shape=(499, 128))
        f.create_virtual_dataset(key, layout)
with h5py.File(w + "/half.h5", "w") as f:
    f["input"] = x.astype("f2"); f["target"] = y.astype("f2")
PYEOF
"$BIN" info "$WORK/vds.h5" | tee "$WORK/vds_info.txt"
grep -q "/input  float32 \[999, 128\]  virtual dataset: 2 mappings from 2 files (part0.h5, part1.h5).*(stored in its source files)" \
  "$WORK/vds_info.txt" || fail "info does not describe the virtual dataset"
for sharding in static blocks; do
  "$MPIEXEC" -n 2 "$BIN" train --config configs/tiny.yaml --set data.train="$WORK/vds.h5" --set data.val="$WORK/vds.h5" \
    --set data.sharding=$sharding --set data.block_rows=100 --set train.epochs=1 --set output.dir="$WORK/vds_$sharding" \
    >"$WORK/vds.txt" 2>&1 || { cat "$WORK/vds.txt"; fail "training on a virtual dataset ($sharding) failed"; }
done
"$MPIEXEC" -n 2 "$BIN" train --config configs/tiny.yaml --set data.train="$WORK/one.h5" --set data.val="$WORK/one.h5" \
  --set train.epochs=1 --set output.dir="$WORK/direct" >/dev/null
"$PY" -c "
import json
a, b = (json.loads(open(f'$WORK/{r}/metrics.jsonl').readline()) for r in ('direct', 'vds_static'))
assert a['train_loss'] == b['train_loss'] and a['val_loss'] == b['val_loss'], (a, b)"
echo "ok: a virtual dataset trains like the file it maps (static, blocks, validation)"
"$BIN" info "$WORK/half.h5" | grep -q "float16 \[999, 128\]" || fail "info does not report float16"
"$MPIEXEC" -n 2 "$BIN" train --config configs/tiny.yaml --set data.train="$WORK/half.h5" --set data.val="$WORK/half.h5" \
  --set train.epochs=1 --set output.dir="$WORK/half" >/dev/null || fail "float16 rows did not train"
echo "ok: float16 rows train"
