# Bad inputs end every rank promptly with a non-zero code and one message that names the
# problem and the fix.
source "$(dirname "$0")/common.sh"
tiny_data "$WORK" 256
T=(--config configs/tiny.yaml --set data.train="$WORK/train.h5" --set data.val="$WORK/val.h5"
   --set output.dir="$WORK/run")

expect_failure 2 "unknown config key 'train.lrr'" -- "$MPIEXEC" -n 2 "$BIN" train "${T[@]}" --set train.lrr=1
# A launcher that leaves the other ranks running when one exits non-zero (MPICH's and Intel MPI's
# Hydra, srun without --kill-on-bad-exit; here Open MPI's mpirun told to): a mistake found before
# MPI starts is still printed once, and every rank ends. Rank 1 used to wait 10 s, then repeat it.
LENIENT=("$MPIEXEC")
if "$MPIEXEC" --version 2>&1 | contains "OpenRTE\|Open MPI"; then LENIENT+=(--mca orte_abort_on_non_zero_status 0); fi
expect_failure 2 "unknown config key 'train.lrr'" -- "${LENIENT[@]}" -n 2 "$BIN" train "${T[@]}" --set train.lrr=1
expect_failure 2 "The following argument was not expected: --bogus" -- "${LENIENT[@]}" -n 2 "$BIN" train --bogus
expect_failure 2 "must be a number > 0" -- "$MPIEXEC" -n 2 "$BIN" train "${T[@]}" --set train.lr=-1
expect_failure 2 "train.clip_grad_norm.*must be a number >= 0" -- "$MPIEXEC" -n 2 "$BIN" train "${T[@]}" --set train.clip_grad_norm=-1
expect_failure 2 "does not exist" -- "$MPIEXEC" -n 2 "$BIN" train "${T[@]}" --set data.val="$WORK/missing.h5"
expect_failure 2 "lower train.batch_size" -- "$MPIEXEC" -n 2 "$BIN" train "${T[@]}" --set train.batch_size=4096
expect_failure 3 "no dataset 'strain'" -- "$MPIEXEC" -n 2 "$BIN" train "${T[@]}" --set data.input_key=strain
echo "not hdf5" > "$WORK/bogus.h5"
expect_failure 3 "cannot open" -- "$MPIEXEC" -n 2 "$BIN" train "${T[@]}" --set data.train="$WORK/bogus.h5"
expect_failure 2 "pass --force" -- "$BIN" make-data --out "$WORK/train.h5"
expect_failure 2 "directory .*/no_dir. does not exist; create it first" -- "$MPIEXEC" -n 2 "$BIN" make-data --out "$WORK/no_dir/train.h5"
expect_failure 2 "--config" -- "$BIN" train --config "$WORK/nope.yaml"

if [[ "$PY_OK" == "TRUE" ]]; then
  "$PY" -c "
import h5py, numpy as np
x = np.zeros((256, 256), np.float32); x[200, 7] = np.nan
with h5py.File('$WORK/nan.h5', 'w') as f:
    f['input'] = x; f['target'] = np.zeros((256, 256), np.float32)
y = np.zeros((256, 256), np.float32); y[100, 3] = -np.inf
with h5py.File('$WORK/inf.h5', 'w') as f:
    f['input'] = np.zeros((256, 256), np.float32); f['target'] = y
# 4 rows of 2^34 float32 (64 GiB each, unwritten chunks: a tiny file).
with h5py.File('$WORK/huge_rows.h5', 'w') as f:
    for key in ('input', 'target'):
        f.create_dataset(key, shape=(4, 2**34), dtype='f4', chunks=(1, 2**20))
with h5py.File('$WORK/empty.h5', 'w') as f:
    f['input'] = np.zeros((0, 256), np.float32); f['target'] = np.zeros((0, 256), np.float32)
with h5py.File('$WORK/short.h5', 'w') as f:
    f['input'] = np.zeros((256, 256), np.float32); f['target'] = np.zeros((255, 256), np.float32)"
  expect_failure 3 "NaN or Inf values, first in row 200" -- "$MPIEXEC" -n 2 "$BIN" train "${T[@]}" --set data.train="$WORK/nan.h5"
  expect_failure 3 "has a NaN or Inf value in row 200" -- "$MPIEXEC" -n 2 "$BIN" train "${T[@]}" \
    --set data.train="$WORK/nan.h5" --set data.sharding=blocks --set data.block_rows=32
  expect_failure 3 "dataset 'target' has a NaN or Inf value in row 100" -- "$MPIEXEC" -n 2 "$BIN" train "${T[@]}" \
    --set data.train="$WORK/inf.h5" --set data.sharding=blocks --set data.block_rows=32
  expect_failure 3 "has no rows" -- "$MPIEXEC" -n 2 "$BIN" train "${T[@]}" --set data.train="$WORK/empty.h5"
  expect_failure 3 "must pair row by row" -- "$MPIEXEC" -n 2 "$BIN" train "${T[@]}" --set data.train="$WORK/short.h5"
  # What cannot fit is refused before anything is allocated, with the numbers and the setting
  # (LibTorch's allocator failed with "[enforce fail at alloc_cpu.cpp:75]" and exit 1).
  expect_failure 2 "a batch of 1 row 128.0 GiB.*one row (input and target) is 128.0 GiB, so no batch fits" -- \
    "$MPIEXEC" -n 2 "$BIN" train "${T[@]}" --set data.train="$WORK/huge_rows.h5" --set train.batch_size=1
  expect_failure 2 "one training step needs at least .* TiB of memory per rank.*make the model smaller (model.hidden" -- \
    "$MPIEXEC" -n 2 "$BIN" train "${T[@]}" --set "model.hidden=[1000000000]"
  "$PY" -c "
import h5py, numpy as np
with h5py.File('$WORK/zero_width.h5', 'w') as f:
    f['input'] = np.zeros((256, 0), np.float32); f['target'] = np.zeros((256, 0), np.float32)
with h5py.File('$WORK/one_row.h5', 'w') as f:
    f['input'] = np.ones((1, 256), np.float32); f['target'] = np.ones((1, 256), np.float32)
with h5py.File('$WORK/no_rows.h5', 'w') as f:
    f['input'] = np.zeros((0, 256), np.float32); f['target'] = np.zeros((0, 256), np.float32)
with h5py.File('$WORK/planes.h5', 'w') as f:
    f['input'] = np.zeros((512, 2, 128), np.float32); f['target'] = np.zeros((512, 2, 128), np.float32)
with h5py.File('$WORK/text.h5', 'w') as f:
    f['input'] = np.array([['a'] * 256] * 256, dtype='S1'); f['target'] = np.zeros((256, 256), np.float32)"
  # Rows of no values (a division by zero once, and a core dump).
  expect_failure 3 "has shape \[256, 0\]: its rows hold no values" -- "$MPIEXEC" -n 2 "$BIN" train "${T[@]}" \
    --set data.train="$WORK/zero_width.h5"
  # A validation set with fewer rows than ranks trains (an empty shard adds (0, 0) to the sums);
  # one of no rows at all does not.
  "$MPIEXEC" -n 2 "$BIN" train "${T[@]}" --set data.val="$WORK/one_row.h5" --set output.dir="$WORK/one_row" \
    --set train.epochs=1 >"$WORK/one_row.txt" 2>&1 || { cat "$WORK/one_row.txt"; fail "a 1-row validation set on 2 ranks"; }
  expect_failure 3 "'$WORK/no_rows.h5': dataset 'input' has no rows" -- "$MPIEXEC" -n 2 "$BIN" train "${T[@]}" \
    --set data.val="$WORK/no_rows.h5"
  # Row shapes, not value counts: [2, 128] and [256] hold as many values.
  expect_failure 3 "training rows have fields 'input' \[2, 128\], 'target' \[2, 128\] but validation rows 'input' \[256\]" \
    -- "$MPIEXEC" -n 2 "$BIN" train "${T[@]}" --set data.train="$WORK/planes.h5" --set model.kind=vae_conv1d
  expect_failure 3 "dataset 'input' in '$WORK/text.h5' has dtype string;" -- "$MPIEXEC" -n 2 "$BIN" train "${T[@]}" \
    --set data.train="$WORK/text.h5"
fi
expect_failure 2 "config key 'data.train': '$WORK' is a directory" -- "$MPIEXEC" -n 2 "$BIN" train "${T[@]}" \
  --set data.train="$WORK"
# make-data checks its arguments and output before it writes anything.
expect_failure 2 "'$WORK' is a directory; give a file name" -- "$MPIEXEC" -n 2 "$BIN" make-data --out "$WORK" --force
! ls "$WORK" | contains "tmp" || fail "make-data onto a directory left a temporary file"
expect_failure 2 "must be a number >= 1, not '0'" -- "$BIN" make-data --out "$WORK/n0.h5" -n 0
# A mistyped row count (a file of petabytes) is refused before a byte is written; it once left a
# sparse 16 TiB temporary behind and crashed in HDF5's clean-up at exit.
expect_failure 3 "make-data: '$WORK/huge.h5' would take 74[0-9.]* TiB, but the file system holding '$WORK' has .* free" -- \
  "$BIN" make-data --out "$WORK/huge.h5" -n 100000000000 -l 1024
[[ ! -e "$WORK/huge.h5" && ! -e "$WORK/huge.h5.tmp" ]] || fail "make-data left a file behind"
[[ $(wc -c < "$WORK/out.txt") -lt 300 ]] || { cat "$WORK/out.txt"; fail "make-data -n 0: the message is not short"; }
expect_failure 2 "must be a finite number >= 0, not 'nan'" -- "$BIN" make-data --out "$WORK/nan_noise.h5" --noise nan
[[ ! -e "$WORK/n0.h5" && ! -e "$WORK/nan_noise.h5" ]] || fail "make-data wrote a file after a bad argument"
expect_failure 2 "unknown command 'trian'; did you mean 'train'?" -- "$BIN" trian --config configs/tiny.yaml
expect_failure 2 "unknown command 'bench iox'; did you mean 'bench io'?" -- "$BIN" bench iox
expect_failure 2 "--seed: must be a whole number from 0 to 18446744073709551615, not '-1'" -- \
  "$BIN" make-data --out "$WORK/neg_seed.h5" --seed -1
[[ ! -e "$WORK/neg_seed.h5" ]] || fail "make-data wrote a file with a negative seed"
# Every real key is a finite float32, named when it is not (1e300 failed inside LibTorch, .inf trained).
for lr in 1e300 .inf 1e-60; do
  expect_failure 2 "config key 'train.lr' (--set train.lr=$lr): must be a finite number that float32 can hold" -- \
    "$MPIEXEC" -n 2 "$BIN" train "${T[@]}" --set train.lr="$lr"
done
# YAML's null is "not set": a config's null keys keep their defaults, and --set KEY=null unsets.
printf 'data:\n  train: %s\n  val: null\n  val_fraction: 0.25\ntrain:\n  epochs: ~\n' "$WORK/train.h5" >"$WORK/null.yaml"
"$MPIEXEC" -n 2 "$BIN" train --config "$WORK/null.yaml" --set output.dir="$WORK/null_run" --print-config \
  | contains "val_fraction: 0.25" || fail "a config with null keys was refused"
"$BIN" train "${T[@]}" --set data.val=null --set data.val_fraction=0.25 --print-config | contains "val: \"\"" \
  || fail "--set data.val=null did not unset data.val"
# Input files must be regular files: a FIFO blocked `info` for ever, a device was "missing".
mkfifo "$WORK/fifo.h5"
expect_failure 2 "'$WORK/fifo.h5' is a FIFO (named pipe), not a regular file" -- "$BIN" info "$WORK/fifo.h5"
expect_failure 2 "config key 'data.val': '$WORK/fifo.h5' is a FIFO (named pipe), not a regular file" -- \
  "$MPIEXEC" -n 2 "$BIN" train "${T[@]}" --set data.val="$WORK/fifo.h5"
expect_failure 2 "config key 'data.train': '/dev/zero' is a character device, not a regular file" -- \
  "$MPIEXEC" -n 2 "$BIN" train "${T[@]}" --set data.train=/dev/zero
expect_failure 2 "fifo.h5' is a FIFO" -- "$BIN" predict --checkpoint "$WORK/fifo.h5" --data "$WORK/val.h5" --out "$WORK/p.h5"
# A file named like a glob pattern: the existing file wins; backslashes make the pattern literal.
cp "$WORK/val.h5" "$WORK/v[1].h5"
"$MPIEXEC" -n 2 "$BIN" train "${T[@]}" --set data.val="$WORK/v[1].h5" --set output.dir="$WORK/literal" \
  --set train.epochs=1 >/dev/null || fail "a data file named v[1].h5 was not found"
"$MPIEXEC" -n 2 "$BIN" train "${T[@]}" --set data.val="$WORK/v\\[1\\].h5" --set output.dir="$WORK/escaped" \
  --set train.epochs=1 >/dev/null || fail "an escaped pattern did not match v[1].h5"
# Without a GPU (this test's machine): a CPU-only LibTorch is told from a CUDA one that sees no GPU
# (pip's torch on a login node, or a job that asked Slurm for no GPUs).
if "$BIN" --version | contains "with CUDA"; then
  expect_failure 2 "train.device=cuda, but this process sees no GPU (CUDA_VISIBLE_DEVICES=''); run it on a GPU node" \
    -- env CUDA_VISIBLE_DEVICES= "$MPIEXEC" -n 2 "$BIN" train "${T[@]}" --set train.device=cuda
else
  expect_failure 2 "train.device=cuda, but this LibTorch has no CUDA; use train.device=cpu" \
    -- "$MPIEXEC" -n 2 "$BIN" train "${T[@]}" --set train.device=cuda
fi
expect_failure 2 "runtime.backend=nccl" -- "$MPIEXEC" -n 2 "$BIN" train "${T[@]}" --set train.device=cpu \
  --set runtime.backend=nccl
expect_failure 2 "cannot create run directory" -- "$MPIEXEC" -n 2 "$BIN" train "${T[@]}" --set output.dir=/etc/hostname/run
# A truncated checkpoint is refused; the good run directory it sits in is left as it was.
"$MPIEXEC" -n 2 "$BIN" train "${T[@]}" --set output.dir="$WORK/ok" --set train.epochs=1 >/dev/null
head -c 1000 "$WORK/ok/checkpoints/epoch-000001.pt" > "$WORK/ok/checkpoints/truncated.pt"
expect_failure 3 "checkpoint '.*truncated.pt' is damaged: not a readable ZIP archive" -- "$MPIEXEC" -n 2 "$BIN" train "${T[@]}" \
  --set output.dir="$WORK/ok" --set train.epochs=2 --resume "$WORK/ok/checkpoints/truncated.pt"
[[ -s "$WORK/ok/checkpoints/epoch-000001.pt" && $(wc -l < "$WORK/ok/metrics.jsonl") -eq 1 ]] \
  || fail "a refused resume changed the earlier checkpoint or metrics"
# Disk full while checkpointing: a 1.6 MB tmpfs holds the first checkpoint (~1 MB) but not the
# best model's copies after it. The run stops with a clear error; the first checkpoint is intact,
# no temporary is left.
if [[ $(id -u) -eq 0 ]] && mkdir -p "$WORK/small" && mount -t tmpfs -o size=1600k tmpfs "$WORK/small" 2>/dev/null; then
  trap 'umount "$WORK/small" 2>/dev/null; rm -rf "$WORK"' EXIT
  expect_failure 1 "disk full or quota exceeded" -- "$MPIEXEC" -n 2 "$BIN" train "${T[@]}" \
    --set output.dir="$WORK/small/run" --set train.epochs=3 --set output.checkpoint_every=1
  ls "$WORK/small/run/checkpoints"
  [[ -s "$WORK/small/run/checkpoints/epoch-000001.pt" ]] || fail "the first checkpoint is gone"
  ! ls "$WORK/small/run/checkpoints" | contains "tmp" || fail "a temporary checkpoint was left behind"
  "$MPIEXEC" -n 2 "$BIN" train "${T[@]}" --set output.dir="$WORK/resumed_small" --set train.epochs=2 \
    --resume "$WORK/small/run/checkpoints/epoch-000001.pt" | contains "resumed from" \
    || fail "the checkpoint written before the disk filled does not resume"
  echo "ok: disk full while checkpointing; the earlier checkpoint resumes"
  # predict onto a full disk names the file and the cause, and leaves no temporary behind.
  mkdir -p "$WORK/tiny" && mount -t tmpfs -o size=200k tmpfs "$WORK/tiny"
  trap 'umount "$WORK/small" "$WORK/tiny" 2>/dev/null; rm -rf "$WORK"' EXIT
  expect_failure 3 "predict: cannot write '$WORK/tiny/pred.h5': the file system holding '$WORK/tiny' is full" -- \
    "$MPIEXEC" -n 2 "$BIN" predict --checkpoint "$WORK/small/run/checkpoints/epoch-000001.pt" --data "$WORK/val.h5" \
    --out "$WORK/tiny/pred.h5"
  [[ -z $(ls "$WORK/tiny") ]] || fail "predict left a file on the full disk: $(ls "$WORK/tiny")"
  # make-data that cannot fit is refused before anything is written.
  expect_failure 3 "make-data: '$WORK/tiny/chirps.h5' would take 7.8 MiB, but the file system holding '$WORK/tiny' has .* free" -- \
    "$MPIEXEC" -n 2 "$BIN" make-data --out "$WORK/tiny/chirps.h5" -n 1000 -l 1024
  [[ -z $(ls "$WORK/tiny") ]] || fail "make-data left a file on the full disk: $(ls "$WORK/tiny")"
else
  echo "skipped: the disk-full case needs root to mount a small tmpfs"
fi
# A file-size limit (ulimit -f; some batch systems set one per job): the write fails naming the
# limit, as one process and as two ranks, and leaves no file or temporary. A process used to be
# killed by SIGXFSZ mid-write, or as one rank to crash in HDF5's clean-up as MPI finalized.
"$BIN" make-data --out "$WORK/big.h5" -n 8000 -l 256 >/dev/null  # predict writes 8 MiB of recon
mkdir -p "$WORK/limited"
LIMIT="it reached this process's file-size limit of 4.0 MiB (ulimit -f)"
for launch in "$BIN" "$MPIEXEC -n 2 $BIN"; do
  (ulimit -f 4096
   expect_failure 3 "predict: cannot write '$WORK/limited/pred.h5': $LIMIT" -- $launch predict \
     --checkpoint "$WORK/ok/checkpoints/epoch-000001.pt" --data "$WORK/big.h5" --out "$WORK/limited/pred.h5") || exit 1
  [[ -z $(ls "$WORK/limited") ]] || fail "predict left a file past the file-size limit: $(ls "$WORK/limited")"
done
# A checkpoint past it (hidden 1024: about 6.5 MB with Adam's moments).
(ulimit -f 4096
 expect_failure 1 "writing '$WORK/limited/run/checkpoints/epoch-000001.pt.tmp' failed: $LIMIT" -- "$BIN" train "${T[@]}" \
   --set output.dir="$WORK/limited/run" --set train.epochs=1 --set model.hidden=[1024]) || exit 1
[[ -z $(ls "$WORK/limited/run/checkpoints") ]] || fail "a checkpoint past the file-size limit was left: $(ls "$WORK/limited/run/checkpoints")"
# srun without --mpi=pmix starts singletons: each sees a world of 1 while the step has 2 tasks.
SLURM_STEP_NUM_TASKS=2 expect_failure 4 "MPI sees a world of 1" -- "$BIN" train "${T[@]}"
[[ ! -e "$WORK/run/model.pt" ]] || fail "a failed run left a model.pt"
echo "all error cases ok"
