# The dataset contract: make-data's output does not depend on the rank count, and files that
# h5py writes (gzip-compressed and chunked, or contiguous) train.
source "$(dirname "$0")/common.sh"
# same_losses RUN_A RUN_B [--epochs N]: the two runs recorded the same training and validation losses.
same_losses() { "$PY" "$E2E_DIR/runs.py" same "$1" "$2" --keys train_loss,val_loss "${@:3}" >/dev/null; }
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
"$BIN" info "$WORK/gzip.h5" | contains "compression: gzip" || fail "info does not report gzip"
"$MPIEXEC" -n 2 "$BIN" train --config configs/tiny.yaml --set data.train="$WORK/gzip.h5" \
  --set data.val="$WORK/contiguous.h5" --set data.input_key=strain --set data.target_key=clean \
  --set train.epochs=2 --set output.dir="$WORK/run" >/dev/null
[[ $(wc -l < "$WORK/run/metrics.jsonl") -eq 2 ]] || fail "training on h5py files did not complete"
echo "ok: trained on gzip-compressed and contiguous h5py files"

# h5py's other compression, LZF (its own filter, which HDF5 lacks; clustertrain brings a
# decoder), with the shuffle filter and chunks that split rows: trains bit for bit like the
# uncompressed file, in both sharding modes.
"$PY" - "$WORK" <<'PYEOF'
import sys, h5py
w = sys.argv[1]
with h5py.File(w + "/one.h5") as a, h5py.File(w + "/lzf.h5", "w") as f:
    for key in ("input", "target"):
        f.create_dataset(key, data=a[key][...], chunks=(64, 100), compression="lzf", shuffle=True)
PYEOF
"$BIN" info "$WORK/lzf.h5" | contains "compression: shuffle, lzf  size" || fail "info does not report lzf"
for sharding in static blocks; do
  for file in one lzf; do
    "$MPIEXEC" -n 2 "$BIN" train --config configs/tiny.yaml --set data.train="$WORK/$file.h5" --set data.val="$WORK/$file.h5" \
      --set data.sharding=$sharding --set data.block_rows=100 --set train.epochs=2 --set output.dir="$WORK/lzf_$file$sharding" \
      >"$WORK/lzf.txt" 2>&1 || { cat "$WORK/lzf.txt"; fail "training on $file.h5 ($sharding) failed"; }
  done
  same_losses "$WORK/lzf_one$sharding" "$WORK/lzf_lzf$sharding" \
    || fail "the LZF-compressed file trains unlike the uncompressed one ($sharding)"
done
echo "ok: h5py's LZF-compressed files train bit for bit like uncompressed ones (static, blocks)"
# Those runs validated on their training file: said, since the validation loss drives the lr.
grep -q "warning: data.val and data.train share '$WORK/lzf.h5': the validation loss, which steps the lr plateau" \
  "$WORK/lzf.txt" || { cat "$WORK/lzf.txt"; fail "validating on the training file is not warned about"; }

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
# The same rows under other dataset names, with a third field of its own shape and type.
with h5py.File(w + "/named.h5", "w") as f:
    for name, key in (("noisy", "input"), ("clean", "target")):
        layout = h5py.VirtualLayout(shape=(999, 128), dtype="f4")
        layout[0:500] = h5py.VirtualSource("part0.h5", key, shape=(500, 128))
        layout[500:999] = h5py.VirtualSource("part1.h5", key, shape=(499, 128))
        f.create_virtual_dataset(name, layout)
    f["extra"] = np.arange(999 * 3, dtype="f8").reshape(999, 3)
with h5py.File(w + "/half.h5", "w") as f:
    f["input"] = x.astype("f2"); f["target"] = y.astype("f2")
with h5py.File(w + "/double.h5", "w") as f:  # numpy's default: float64, chunked and not
    f.create_dataset("input", data=x.astype("f8"), chunks=(100, 128)); f["target"] = y.astype("f8")
with h5py.File(w + "/ints.h5", "w") as f:
    f["input"] = np.round(x * 10).astype("i2"); f["target"] = np.round(y * 10).astype("i2")
with h5py.File(w + "/ints_as_float.h5", "w") as f:
    f["input"] = np.round(x * 10).astype("f4"); f["target"] = np.round(y * 10).astype("f4")
with h5py.File(w + "/gap.h5", "w") as f:
    layout = h5py.VirtualLayout(shape=(999, 128), dtype="f4")
    layout[0:500] = h5py.VirtualSource("part0.h5", "input", shape=(500, 128))
    layout[500:999] = h5py.VirtualSource("missing_part.h5", "input", shape=(499, 128))
    f.create_virtual_dataset("input", layout)
    f["target"] = y
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
same_losses "$WORK/direct" "$WORK/vds_static" --epochs 1
echo "ok: a virtual dataset trains like the file it maps (static, blocks, validation)"
# data.fields: renamed virtual datasets and an extra float64 field [3] travel with their rows
# (the VAE reads input and target only): the same numbers as the file they map.
for sharding in static blocks; do
  "$MPIEXEC" -n 2 "$BIN" train --config configs/tiny.yaml --set data.train="$WORK/named.h5" --set data.val="$WORK/named.h5" \
    --set "data.fields={input: noisy, target: clean, params: extra}" --set data.sharding=$sharding \
    --set data.block_rows=100 --set train.epochs=1 --set output.dir="$WORK/named_$sharding" >"$WORK/named.txt" 2>&1 \
    || { cat "$WORK/named.txt"; fail "training on data.fields ($sharding) failed"; }
done
grep -q "fields 'input' \[128\], 'params' \[3\], 'target' \[128\]" "$WORK/named.txt" || { cat "$WORK/named.txt"; fail "fields"; }
same_losses "$WORK/direct" "$WORK/named_static" --epochs 1
echo "ok: data.fields maps renamed (virtual) datasets and an extra field of its own shape and type"
expect_failure 3 "virtual dataset 'input' maps rows from files that do not exist: missing_part.h5" -- \
  "$MPIEXEC" -n 2 "$BIN" train --config configs/tiny.yaml --set data.train="$WORK/gap.h5" --set data.val="$WORK/one.h5" --set output.dir="$WORK/gap"

# Other stored types are read collectively in their own type and converted in memory: float64
# holding float32 values trains bit for bit like the float32 file (both sharding modes), int16
# like the same integers stored as float32, and float16 trains; HDF5 never falls back to
# independent I/O for them (rank 0 would warn).
"$BIN" info "$WORK/half.h5" | contains "float16 \[999, 128\]" || fail "info does not report float16"
trains_alike() {  # trains_alike A B [flags]: training on A.h5 and on B.h5 gives the same losses
  local a=$1 b=$2 run
  shift 2
  for run in "$a" "$b"; do
    "$MPIEXEC" -n 2 "$BIN" train --config configs/tiny.yaml --set data.train="$WORK/$run.h5" --set data.val="$WORK/$run.h5" \
      --set train.epochs=2 --set output.dir="$WORK/typed_$run$*" "$@" >"$WORK/typed.txt" 2>&1 \
      || { cat "$WORK/typed.txt"; fail "training on $run.h5 failed"; }
    ! grep -q "fell back from collective" "$WORK/typed.txt" || { cat "$WORK/typed.txt"; fail "$run.h5: independent I/O"; }
  done
  grep -q "data: '$WORK/$b.h5' stores 'input' as [a-z0-9]* and 'target' as [a-z0-9]*: read collectively in that type" \
    "$WORK/typed.txt" || { cat "$WORK/typed.txt"; fail "the conversion of $b.h5 is not logged"; }
  same_losses "$WORK/typed_$a$*" "$WORK/typed_$b$*"
}
trains_alike one double
trains_alike one double --set data.sharding=blocks --set data.block_rows=100
trains_alike ints_as_float ints
"$MPIEXEC" -n 2 "$BIN" train --config configs/tiny.yaml --set data.train="$WORK/half.h5" --set data.val="$WORK/half.h5" \
  --set train.epochs=1 --set output.dir="$WORK/half" >/dev/null || fail "float16 rows did not train"
echo "ok: float64 and int16 train exactly like float32 holding the same values; float16 trains"

# MPI-IO hints reach the collective opens and are echoed.
"$MPIEXEC" -n 2 "$BIN" train --config configs/tiny.yaml --set data.train="$WORK/one.h5" --set data.val="$WORK/one.h5" \
  --set train.epochs=1 --set output.dir="$WORK/hints" --set "data.mpi_hints={romio_cb_read: enable, cb_buffer_size: 1048576}" \
  >"$WORK/hints.txt" 2>&1 || { cat "$WORK/hints.txt"; fail "training with MPI-IO hints failed"; }
grep -q "data: MPI-IO hints cb_buffer_size=1048576, romio_cb_read=enable" "$WORK/hints.txt" || fail "hints not echoed"
grep -q "mpi_hints: {cb_buffer_size: 1048576, romio_cb_read: enable}" "$WORK/hints/config.yaml" || fail "hints not in config.yaml"

# HDF5 locks the files it opens alone (info, the blocks reader). When it cannot (another program
# holds a lock; file systems without locks fail alike), the message names the way out.
flock -x "$WORK/one.h5" sleep 300 >/dev/null 2>&1 &
holder=$!
until ! flock -n -s "$WORK/one.h5" true 2>/dev/null; do sleep 0.1; done  # held now
expect_failure 3 "unable to lock file.*set HDF5_USE_FILE_LOCKING=FALSE in the job's environment" -- "$BIN" info "$WORK/one.h5"
HDF5_USE_FILE_LOCKING=FALSE "$BIN" info "$WORK/one.h5" >/dev/null || fail "HDF5_USE_FILE_LOCKING=FALSE did not help"
pkill -P "$holder" sleep || true  # the lock's holder is flock's child
wait "$holder" 2>/dev/null || true
echo "ok: a file HDF5 cannot lock: the message names HDF5_USE_FILE_LOCKING"

# data.val_fraction: the file's last rows are the validation set and are never trained on. A run
# with it equals a run on two files holding the head and the tail (train and val losses, bit
# for bit) for 1, 2 and 3 ranks and both sharding modes, and a resumed run equals a straight one.
"$PY" - "$WORK" <<'PYEOF'
import sys, h5py
w = sys.argv[1]
with h5py.File(w + "/one.h5") as a, h5py.File(w + "/head.h5", "w") as h, h5py.File(w + "/tail.h5", "w") as t:
    for key in ("input", "target"):
        h[key] = a[key][:799]; t[key] = a[key][799:]  # 999 rows, fraction 0.2: the last 200
PYEOF
V=(--config configs/tiny.yaml --set train.epochs=2)
for ranks in 1 2 3; do
  for sharding in static blocks; do
    S=(--set data.sharding=$sharding --set data.block_rows=100)
    "$MPIEXEC" -n $ranks "$BIN" train "${V[@]}" "${S[@]}" --set data.train="$WORK/one.h5" --set data.val= --set data.val_fraction=0.2 \
      --set output.dir="$WORK/split$ranks$sharding" >"$WORK/split.txt" 2>&1 || { cat "$WORK/split.txt"; fail "val_fraction run"; }
    "$MPIEXEC" -n $ranks "$BIN" train "${V[@]}" "${S[@]}" --set data.train="$WORK/head.h5" --set data.val="$WORK/tail.h5" \
      --set output.dir="$WORK/files$ranks$sharding" >/dev/null 2>&1 || fail "head/tail run"
    same_losses "$WORK/split$ranks$sharding" "$WORK/files$ranks$sharding" \
      || fail "val_fraction on $ranks ranks ($sharding) is not the head/tail split"
  done
done
grep -q "data.val_fraction=0.2: rows 799-998 of '$WORK/one.h5' are the validation set, never trained on; training uses rows 0-798" \
  "$WORK/split.txt" || { cat "$WORK/split.txt"; fail "the split is not logged"; }
! grep -q "data.val and data.train share" "$WORK/split.txt" || fail "a held-out tail is warned about as shared"
"$MPIEXEC" -n 2 "$BIN" train "${V[@]}" --set data.train="$WORK/one.h5" --set data.val= --set data.val_fraction=0.2 --set train.epochs=1 \
  --set output.dir="$WORK/split_resumed" >/dev/null
"$MPIEXEC" -n 2 "$BIN" train "${V[@]}" --set data.train="$WORK/one.h5" --set data.val= --set data.val_fraction=0.2 \
  --set output.dir="$WORK/split_resumed" --resume auto >/dev/null
same_losses "$WORK/split_resumed" "$WORK/split2static" \
  || fail "a resumed val_fraction run differs from the straight one"
echo "ok: data.val_fraction holds out the last rows, the same for 1-3 ranks, both modes and a resume"

# Several files as one dataset: one.h5's rows split over four files of uneven sizes (one of a
# single row), given as a glob, train bit for bit like one.h5 (static on 3 ranks, blocks with
# blocks spanning files on 2, and data.val as a list), and data.val_fraction holds out the same
# rows. A file with other rows, a pattern matching nothing and a NaN in a later file are errors
# that name the file.
"$PY" - "$WORK" <<'PYEOF'
import os, sys, h5py, numpy as np
w = sys.argv[1]
os.makedirs(w + "/bank", exist_ok=True)
with h5py.File(w + "/one.h5") as a:
    x, y = a["input"][...], a["target"][...]
bounds = [0, 250, 251, 751, 999]
for i in range(4):
    with h5py.File(f"{w}/bank/bank-{i}.h5", "w") as f:
        f["input"] = x[bounds[i]:bounds[i + 1]]; f["target"] = y[bounds[i]:bounds[i + 1]]
with h5py.File(w + "/bank/val.h5", "w") as f:  # data.val's list: bank-0.h5, bank-1.h5
    f["input"] = x[:251]; f["target"] = y[:251]
with h5py.File(w + "/odd.h5", "w") as f:
    f["input"] = x[:10, :64]; f["target"] = y[:10, :64]
os.makedirs(w + "/nan", exist_ok=True)
for i in range(3):
    with h5py.File(f"{w}/nan/part-{i}.h5", "w") as f:
        rows = x[i * 300:(i + 1) * 300].copy()
        if i == 2:
            rows[17, 5] = np.nan
        f["input"] = rows; f["target"] = y[i * 300:(i + 1) * 300]
PYEOF
M=(--config configs/tiny.yaml --set train.epochs=2)
for setup in "3 static" "2 blocks"; do
  read -r ranks sharding <<<"$setup"
  S=(--set data.sharding=$sharding --set data.block_rows=100)
  "$MPIEXEC" -n $ranks "$BIN" train "${M[@]}" "${S[@]}" --set data.train="$WORK/bank/bank-*.h5" \
    --set "data.val=[$WORK/bank/bank-0.h5, $WORK/bank/bank-1.h5]" --set output.dir="$WORK/bank_$sharding" \
    >"$WORK/bank.txt" 2>&1 || { cat "$WORK/bank.txt"; fail "training on a glob of files ($sharding) failed"; }
  grep -q "data: data.train is 4 files ('$WORK/bank/bank-0.h5' ... '$WORK/bank/bank-3.h5'), 999 rows together" \
    "$WORK/bank.txt" || { cat "$WORK/bank.txt"; fail "the file count and rows are not logged"; }
  "$MPIEXEC" -n $ranks "$BIN" train "${M[@]}" "${S[@]}" --set data.train="$WORK/one.h5" --set data.val="$WORK/bank/val.h5" \
    --set output.dir="$WORK/bank_one_$sharding" >/dev/null 2>&1 || fail "training on one.h5 ($sharding) failed"
  same_losses "$WORK/bank_$sharding" "$WORK/bank_one_$sharding" \
    || fail "four files ($sharding, $ranks ranks) do not train like the one file holding their rows"
done
"$MPIEXEC" -n 2 "$BIN" train "${V[@]}" --set data.train="$WORK/bank/bank-*.h5" --set data.val= --set data.val_fraction=0.2 \
  --set output.dir="$WORK/bank_split" >"$WORK/bank_split.txt" 2>&1 || { cat "$WORK/bank_split.txt"; fail "val_fraction over files"; }
same_losses "$WORK/bank_split" "$WORK/split2static" \
  || fail "val_fraction over four files holds out other rows than over one file"
grep -q "data.val_fraction=0.2: rows 48-247 of '$WORK/bank/bank-3.h5' are the validation set, never trained on; training uses the 799 rows before them" \
  "$WORK/bank_split.txt" || { cat "$WORK/bank_split.txt"; fail "the split over files is not logged"; }
echo "ok: a glob of four files trains like one file (static on 3 ranks, blocks on 2, data.val as a list, val_fraction)"
expect_failure 3 "'$WORK/odd.h5': dataset 'input' has rows \[64\] of float32 but '$WORK/one.h5' has rows \[128\] of float32; every file of data.train" -- \
  "$MPIEXEC" -n 2 "$BIN" train "${M[@]}" --set output.dir="$WORK/bad1" --set "data.train=[$WORK/one.h5, $WORK/odd.h5]" --set data.val="$WORK/one.h5"
expect_failure 2 "config key 'data.train': '$WORK/bank/shard-\*.h5' matches no file" -- \
  "$MPIEXEC" -n 2 "$BIN" train "${M[@]}" --set output.dir="$WORK/bad2" --set data.train="$WORK/bank/shard-*.h5" --set data.val="$WORK/one.h5"
expect_failure 3 "'$WORK/nan/part-2.h5': dataset 'input' has NaN or Inf values, first in row 17" -- \
  "$MPIEXEC" -n 2 "$BIN" train "${M[@]}" --set output.dir="$WORK/bad3" --set data.train="$WORK/nan/part-*.h5" --set data.val="$WORK/one.h5"
expect_failure 3 "'$WORK/nan/part-2.h5': dataset 'input' has a NaN or Inf value in row 17" -- \
  "$MPIEXEC" -n 2 "$BIN" train "${M[@]}" --set output.dir="$WORK/bad4" --set data.train="$WORK/nan/part-*.h5" --set data.val="$WORK/one.h5" \
  --set data.sharding=blocks --set data.block_rows=100
echo "ok: files with other rows, a pattern matching nothing and a NaN in a later file name the file"
