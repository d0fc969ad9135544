# What a run leaves to look at: TensorBoard event files, the best model and the loss-curve picture.
# A 2-rank run of 5 epochs (a checkpoint every epoch), then epoch 5's checkpoint is removed (as if
# the run had died after logging epoch 5) and it is resumed to 7 epochs, keeping 1 checkpoint.
# Checked with tests/e2e/read_events.py (Google's protobuf runtime, a CRC-32C of its own):
# - the event files hold each epoch record once, equal to metrics.jsonl field for field (as
#   float32), and train/loss_step for every step (output.log_every=1) whose mean over the epoch
#   is the epoch's train loss; the resumed run's SessionLog START drops the stopped run's epoch
#   5 (without it, epoch 5 would be there twice);
# - best_epoch is the epoch the plateau's threshold test picks from metrics.jsonl (a large
#   threshold, so it is not the last); best.pt holds that epoch's weights and
#   checkpoints/best.pt the same model, kept through output.keep=1; predict accepts it;
# - launch/plot_runs.py draws a PNG of the runs, and names a run directory it cannot read;
# - host syncs per epoch (CT_TEST_COUNT_SYNCS) do not grow with the steps of an epoch.
source "$(dirname "$0")/common.sh"
need_python
tiny_data "$WORK" 2048  # 32 steps an epoch at 2 ranks x 32 rows
T=(--config configs/tiny.yaml --set data.train="$WORK/train.h5" --set data.val="$WORK/val.h5"
   --set output.dir="$WORK/run" --set output.log_every=1 --set output.checkpoint_every=1
   --set train.plateau.threshold=0.5 --set train.plateau.patience=1)
"$MPIEXEC" -n 2 "$BIN" train "${T[@]}" --set train.epochs=5 --set output.keep=10 >"$WORK/first.txt" 2>&1 \
  || { cat "$WORK/first.txt"; fail "the first run failed"; }
grep -q "best epoch [0-9]* (val loss .*): $WORK/run/best.pt" "$WORK/first.txt" || { cat "$WORK/first.txt"; fail "no best-epoch line"; }

"$PY" - "$WORK/run" <<'PYEOF'
import sys, torch
import runs
run = sys.argv[1]
rows = runs.records(run)
best, best_epoch = float("inf"), 0
for r in rows:  # the plateau's test: min mode, rel threshold 0.5
    if r["val_loss"] < best * (1 - 0.5):
        best, best_epoch = r["val_loss"], r["epoch"]
    assert r["best_epoch"] == best_epoch, (r["epoch"], r["best_epoch"], best_epoch)
assert 0 < best_epoch < len(rows), f"best epoch {best_epoch} of {len(rows)}: pick a threshold that makes it earlier"
state = torch.load(f"{run}/best.pt")
epoch_model = torch.jit.load(f"{run}/checkpoints/epoch-{best_epoch:06d}.pt").model.state_dict()
best_model = torch.jit.load(f"{run}/checkpoints/best.pt").model.state_dict()
last = torch.load(f"{run}/model.pt")
for k in state:
    assert torch.equal(state[k], epoch_model[k]) and torch.equal(state[k], best_model[k]), k
assert any(not torch.equal(state[k], last[k]) for k in state), "best.pt equals the last model"
print(f"ok: best_epoch {best_epoch} by the plateau's test; best.pt and checkpoints/best.pt hold epoch {best_epoch}")
PYEOF

# As if the run had died after logging epoch 5 and before its checkpoint: resumed from epoch 4.
rm "$WORK/run/checkpoints/epoch-000005.pt"
"$MPIEXEC" -n 2 "$BIN" train "${T[@]}" --set train.epochs=7 --set output.keep=1 --resume auto \
  >"$WORK/second.txt" 2>&1 || { cat "$WORK/second.txt"; fail "the resumed run failed"; }
grep -q "resumed from .*epoch-000004.pt" "$WORK/second.txt" || { cat "$WORK/second.txt"; fail "not resumed from epoch 4"; }
[[ "$(ls "$WORK/run/checkpoints")" == "$(printf 'best.pt\nepoch-000007.pt')" ]] \
  || { ls "$WORK/run/checkpoints"; fail "output.keep=1 should leave the newest checkpoint and best.pt"; }

"$PY" - "$WORK/run" <<'PYEOF'
import math, sys, struct, torch
import runs
from read_events import read_events
run = sys.argv[1]
rows = runs.records(run)
assert [r["epoch"] for r in rows] == list(range(1, 8)), [r["epoch"] for r in rows]
f32 = lambda x: float("nan") if x is None else struct.unpack("f", struct.pack("f", x))[0]
tag = lambda name: ("time/" + name[:-8] if name.endswith("_seconds") else
                    name.replace("_", "/", 1) if name.startswith(("train_", "val_")) else name)
scalars = read_events(f"{run}/tensorboard")
steps_per_epoch = 32
for name in rows[0]:
    if name == "global_step":
        continue
    series = scalars[tag(name)]
    assert [s for s, _ in series] == [r["global_step"] for r in rows], (name, series)
    for (step, value), r in zip(series, rows):
        want = f32(r[name])
        assert value == want or (math.isnan(value) and math.isnan(want)), (name, step, value, r[name])
loss_steps = scalars["train/loss_step"]
assert [s for s, _ in loss_steps] == list(range(1, 7 * steps_per_epoch + 1)), "train/loss_step not at every step once"
for r in rows:
    epoch_steps = [v for s, v in loss_steps if r["global_step"] - steps_per_epoch < s <= r["global_step"]]
    mean = sum(epoch_steps) / len(epoch_steps)
    assert abs(mean - r["train_loss"]) <= 1e-5 * abs(r["train_loss"]), (r["epoch"], mean, r["train_loss"])
unpurged = read_events(f"{run}/tensorboard", purge=False)
assert len(unpurged["val/loss"]) == 8, "the stopped run's epoch 5 should be in the first file"
best = torch.load(f"{run}/best.pt")
best_model = torch.jit.load(f"{run}/checkpoints/best.pt").model.state_dict()
assert all(torch.equal(best[k], best_model[k]) for k in best)
print(f"ok: {len(rows)} epoch records x {len(rows[0]) - 1} tags and {len(loss_steps)} step losses, equal to "
      "metrics.jsonl; epoch 5 of the stopped run dropped by the resumed run's SessionLog START")
PYEOF

"$BIN" predict --checkpoint "$WORK/run/checkpoints/best.pt" --data "$WORK/val.h5" --out "$WORK/pred.h5" >"$WORK/pred.txt" 2>&1 \
  || { cat "$WORK/pred.txt"; fail "predict does not accept checkpoints/best.pt"; }
echo "ok: predict --checkpoint checkpoints/best.pt"

# The picture: both runs of this test on one PNG.
"$PY" launch/plot_runs.py "$WORK/run" "$WORK/run" --out "$WORK/curves.png" >/dev/null || fail "plot_runs.py failed"
[[ "$(head -c 8 "$WORK/curves.png" | od -An -tx1 | tr -d ' \n')" == "89504e470d0a1a0a" ]] || fail "curves.png is not a PNG"
"$PY" launch/plot_runs.py "$WORK/run" >/dev/null && [[ -s "$WORK/run/curves.png" ]] || fail "no RUN_DIR/curves.png by default"
! "$PY" launch/plot_runs.py "$WORK/nowhere" 2>"$WORK/plot.txt" || fail "plot_runs.py accepted a missing run"
grep -q "cannot read .*nowhere/metrics.jsonl" "$WORK/plot.txt" || { cat "$WORK/plot.txt"; fail "no clear error for a missing run"; }
echo "ok: launch/plot_runs.py draws the runs' curves (PNG) and names a missing run"

# No host sync inside the loop: with the per-step losses going to TensorBoard every step, an
# epoch of 64 steps makes as many host syncs (tensor -> host number, device -> host copy; counted
# by CT_TEST_COUNT_SYNCS through LibTorch's RecordFunction) as an epoch of 32.
"$BIN" make-data --out "$WORK/train64.h5" -n 4096 -l 256 --seed 13 >/dev/null
syncs() {  # syncs ROWS_FILE NAME: "count count" of the run's 2 epochs
  CT_TEST_COUNT_SYNCS=1 "$MPIEXEC" -n 2 "$BIN" train --config configs/tiny.yaml \
    --set data.train="$1" --set data.val="$WORK/val.h5" --set output.dir="$WORK/$2" --set output.log_every=1 \
    --set train.epochs=2 >"$WORK/$2.txt" 2>&1 || { cat "$WORK/$2.txt"; fail "the sync-count run failed"; }
  grep -o "host syncs in epoch [0-9]*: [0-9]*" "$WORK/$2.txt" | awk '{print $NF}' | tr '\n' ' '
}
short=$(syncs "$WORK/train.h5" syncs32)
long=$(syncs "$WORK/train64.h5" syncs64)
[[ $(wc -w <<<"$short") -eq 2 ]] || fail "no sync counts were logged"
[[ "$short" == "$long" ]] || fail "host syncs per epoch grow with the steps: $short at 32 steps, $long at 64"
echo "ok: host syncs per epoch: $short at 32 steps an epoch, $long at 64 (TensorBoard step losses on)"
