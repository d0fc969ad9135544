# Checkpoints and exact resume: a run stopped after epoch 2 and resumed continues exactly as
# an uninterrupted run (CPU, same world size: every loss, lr and weight bit for bit); Adam split
# over the ranks (runtime.shard_optimizer), in node-shared memory or all-gathered where /dev/shm
# is full, trains as unsplit Adam, bit for bit.
source "$(dirname "$0")/common.sh"
need_python
tiny_data "$WORK" 1024
T=(--config configs/tiny.yaml --set data.train="$WORK/train.h5" --set data.val="$WORK/val.h5"
   --set train.plateau.patience=0 --set train.plateau.threshold=0.05)   # make the lr drop, to test its state
train2() { "$MPIEXEC" -n 2 "$BIN" train "${T[@]}" "$@"; }

train2 --set output.dir="$WORK/straight" --set train.epochs=4 >"$WORK/straight.txt"
# runtime.shard_optimizer (the default): the node's 2 ranks split Adam's update, in place in
# node-shared memory. The same run with every rank updating everything gives the same losses
# and weights, bit for bit, and so does the resumed one below (both ranks load the checkpoint
# into the one shared copy).
grep -q "optimizer: Adam .*split over the node's 2 ranks.*in shared memory" "$WORK/straight.txt" ||
  { cat "$WORK/straight.txt"; fail "Adam was not split in node-shared memory"; }
train2 --set output.dir="$WORK/unsplit" --set train.epochs=4 --set runtime.shard_optimizer=false >"$WORK/unsplit.txt"
grep -q "optimizer: Adam over" "$WORK/unsplit.txt" || fail "no optimizer line"
! grep -q "split over" "$WORK/unsplit.txt" || fail "runtime.shard_optimizer=false still split Adam"
# Where /dev/shm cannot hold the node's copy (here a private 256 KiB tmpfs, in a mount namespace
# of the run's own; Docker's default is 64 MiB), the ranks agree to all-gather instead, say why,
# and train the same numbers. Needs root for the mount (CI has it); Open MPI's own shared memory
# goes to $WORK meanwhile.
if unshare -m true 2>/dev/null; then
  unshare -m bash -c 'mount -t tmpfs -o size=256k tmpfs /dev/shm && exec "$@"' _ \
    env OMPI_MCA_btl_vader_backing_directory="$WORK" "$MPIEXEC" -n 2 "$BIN" train "${T[@]}" \
    --set output.dir="$WORK/gathered" --set train.epochs=4 >"$WORK/gathered.txt"
  grep -q "split over the node's 2 ranks (each updates 1/2, then they all-gather the parameters; no shared memory: rank 0 of the node: /dev/shm has 256.0 KiB free and the buffers need" \
    "$WORK/gathered.txt" || { cat "$WORK/gathered.txt"; fail "a full /dev/shm did not fall back to the all-gather with why"; }
else
  echo "note: unshare -m not permitted here: the full-/dev/shm fallback was not run"
fi
train2 --set output.dir="$WORK/resumed" --set train.epochs=2 >/dev/null
train2 --set output.dir="$WORK/resumed" --set train.epochs=4 --resume auto | tee "$WORK/resume.txt"
grep -q "resumed from .*epoch-000002.pt: epoch 2 done" "$WORK/resume.txt" || fail "did not resume from epoch 2"
"$PY" - "$WORK" <<'PYEOF'
import os
import sys
import runs
w = sys.argv[1]
keys = ["epoch", "global_step", "train_loss", "train_mse", "train_kl", "val_loss", "val_mse", "val_kl", "lr"]
runs.same_records(f"{w}/straight", f"{w}/resumed", keys, epochs=4)
a = runs.records(f"{w}/straight")
assert len({r["lr"] for r in a}) > 1, "the lr never dropped: the plateau state was not exercised"
runs.same_weights(f"{w}/straight", f"{w}/resumed")
runs.same_records(f"{w}/straight", f"{w}/unsplit", keys, epochs=4)
runs.same_weights(f"{w}/straight", f"{w}/unsplit")
if os.path.isdir(f"{w}/gathered"):  # the full-/dev/shm run (needs unshare -m)
    runs.same_records(f"{w}/straight", f"{w}/gathered", keys, epochs=4)
    runs.same_weights(f"{w}/straight", f"{w}/gathered")
assert len(open(f"{w}/resumed/metrics.csv").read().splitlines()) == 5
print("ok: resumed run equals the uninterrupted run, and Adam split over ranks (in shared memory, or all-gathered where /dev/shm is full) the unsplit one, bit for bit; lrs", [r["lr"] for r in a])
PYEOF

# The optimizer seam: SGD with momentum (train.optimizer=sgd) checkpoints its momentum buffers
# and resumes bit for bit too; a checkpoint of one optimizer is refused by another.
S=(--set train.optimizer=sgd --set train.lr=0.05 --set train.weight_decay=0.01)
train2 "${S[@]}" --set output.dir="$WORK/sgd_straight" --set train.epochs=3 >/dev/null
train2 "${S[@]}" --set output.dir="$WORK/sgd_resumed" --set train.epochs=1 >/dev/null
train2 "${S[@]}" --set output.dir="$WORK/sgd_resumed" --set train.epochs=3 --resume auto >"$WORK/sgd.txt" \
  || { cat "$WORK/sgd.txt"; fail "resuming SGD"; }
grep -q "optimizer: SGD (momentum 0.9, L2 weight decay 0.01)" "$WORK/sgd.txt" || { cat "$WORK/sgd.txt"; fail "no SGD line"; }
"$PY" "$E2E_DIR/runs.py" same "$WORK/sgd_straight" "$WORK/sgd_resumed" --epochs 3 --keys train_loss,val_loss --weights \
  || fail "SGD's resumed run differs from the straight run"
expect_failure 2 "holds no state of the optimizer 'adam': it was trained with another train.optimizer" -- \
  "$MPIEXEC" -n 2 "$BIN" train "${T[@]}" --set output.dir="$WORK/sgd_resumed" --set train.epochs=4 --resume auto \
  --allow-config-changes
echo "ok: SGD with momentum resumes bit for bit; an Adam run refuses its checkpoint"

# The newest output.keep checkpoints are kept, and best.pt besides.
ls "$WORK/straight/checkpoints" | tee "$WORK/all.txt" | grep "^epoch-" >"$WORK/ckpts.txt"
[[ $(wc -l < "$WORK/ckpts.txt") -eq 3 ]] || fail "expected 3 checkpoints (output.keep)"
grep -qx "best.pt" "$WORK/all.txt" || fail "checkpoints/best.pt is missing"
[[ $(head -1 "$WORK/ckpts.txt") == epoch-000002.pt ]] || fail "the oldest checkpoint was not pruned"

# Another world size: resumes, re-derives the lr, and says so.
"$MPIEXEC" -n 1 "$BIN" train "${T[@]}" --set output.dir="$WORK/resumed" --set train.epochs=5 --resume auto \
  2>&1 | tee "$WORK/ws.txt"
grep -q "a 2-rank run (global batch 64) resumed on 1 ranks (global batch 32)" "$WORK/ws.txt" || fail "world-size change not logged"
[[ $(wc -l < "$WORK/resumed/metrics.jsonl") -eq 5 ]] || fail "world-size resume did not train epoch 5"

# Nothing to resume: starts fresh. A checkpoint of another model: a clear error.
train2 --set output.dir="$WORK/fresh" --set train.epochs=1 --resume auto | contains "starting from scratch" \
  || fail "--resume auto without checkpoints should start from scratch"
expect_failure 2 "other settings than it was trained with (model.latent)" -- "$MPIEXEC" -n 2 "$BIN" train "${T[@]}" \
  --set output.dir="$WORK/straight" --set model.latent=4 --set train.epochs=6 --resume auto
expect_failure 2 "holds a vae_mlp" -- "$MPIEXEC" -n 2 "$BIN" train "${T[@]}" --set output.dir="$WORK/straight" \
  --set model.latent=4 --set train.epochs=6 --resume auto --allow-config-changes
expect_failure 2 "none.pt' does not exist" -- "$MPIEXEC" -n 2 "$BIN" train "${T[@]}" --resume "$WORK/none.pt"
echo "all resume cases ok"
