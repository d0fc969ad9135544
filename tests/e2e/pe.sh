# Parameter estimation (configs/pe/), the "any model" contract end to end:
#   - make-data writes `params`; a TorchScript module with forward(batch: Dict) -> Dict trains on
#     the fields strain and params (data.fields), on 2 ranks and on 1 with the same global batch
#     (data.sharding=replicated): the same loss and metric trajectories to 1e-5;
#   - its validation NLL ends far below the NLL of the prior (a Gaussian fitted to the training
#     parameters);
#   - `predict` on best.pt writes its outputs (mean, log_sigma); on held-out rows the means
#     correlate with the truth (r > 0.9) and the posterior is calibrated (P-P: 60-76% inside the
#     68% interval, 90-98% inside the 95% interval) for the parameters the chirp determines:
#     merger time, starting frequency, amplitude (the ringdown's damping spans a few samples in
#     the noise, and the phase wraps at 2 pi, which a Gaussian cannot describe);
#   - the named metrics reach metrics.jsonl, TensorBoard (train/<name>, val/<name>) and
#     launch/plot_runs.py;
#   - the six bad inputs of the contract: one clear message, exit 2 or 3.
source "$(dirname "$0")/common.sh"
need_python
"$MPIEXEC" -n 2 "$BIN" make-data --out "$WORK/train.h5" -n 65536 -l 256 --seed 11 >/dev/null
"$MPIEXEC" -n 2 "$BIN" make-data --out "$WORK/val.h5" -n 2048 -l 256 --seed 12 >/dev/null
"$MPIEXEC" -n 2 "$BIN" make-data --out "$WORK/test.h5" -n 2048 -l 256 --seed 13 >/dev/null
"$PY" configs/pe/make_model.py --data "$WORK/train.h5" --out "$WORK/pe.pt" >/dev/null
P=(--config configs/pe/pe.yaml --set data.train="$WORK/train.h5" --set data.val="$WORK/val.h5"
  --set model.path="$WORK/pe.pt")

"$MPIEXEC" -n 2 "$BIN" train "${P[@]}" --set output.dir="$WORK/np2" >"$WORK/np2.txt" 2>&1 \
  || { cat "$WORK/np2.txt"; fail "training on 2 ranks"; }
"$MPIEXEC" -n 1 "$BIN" train "${P[@]}" --set output.dir="$WORK/np1" --set train.batch_size=256 >"$WORK/np1.txt" 2>&1 \
  || { cat "$WORK/np1.txt"; fail "training on 1 rank"; }
grep -q "forward(batch) -> dict" "$WORK/np2.txt" || fail "the dict contract was not recognised"
"$MPIEXEC" -n 2 "$BIN" predict --checkpoint "$WORK/np2/checkpoints/best.pt" --data "$WORK/test.h5" \
  --out "$WORK/posterior.h5" >"$WORK/predict.txt" 2>&1 || { cat "$WORK/predict.txt"; fail "predict"; }
grep -q "mean \[2048, 5\], log_sigma \[2048, 5\]" "$WORK/predict.txt" || { cat "$WORK/predict.txt"; fail "outputs"; }
"$PY" configs/pe/pp_plot.py "$WORK/posterior.h5" "$WORK/test.h5" --json >"$WORK/pp.json" || fail "pp_plot.py"
"$PY" configs/pe/pp_plot.py "$WORK/posterior.h5" "$WORK/test.h5" --out "$WORK/pp.png"

"$PY" - "$WORK" <<'PYEOF'
import json, math, struct, sys, h5py, numpy as np
import runs
from read_events import read_events
w = sys.argv[1]
rows = {n: runs.records(f"{w}/np{n}") for n in (1, 2)}
names = ["t_merge", "f_start", "amplitude", "phase", "damping"]
keys = [f"{s}_{m}" for s in ("train", "val") for m in ["loss"] + [f"mae_{n}" for n in names]]
assert all(k in rows[2][0] for k in keys), sorted(rows[2][0])
for a, b in zip(rows[1], rows[2]):
    for k in keys:
        assert abs(a[k] - b[k]) <= 1e-5 * abs(b[k]) + 1e-7, ("1 vs 2 ranks", a["epoch"], k, a[k], b[k])
print(f"ok: 1 and 2 ranks, global batch 256: {len(keys)} losses and metrics agree to 1e-5 over "
      f"{len(rows[2])} epochs")

# The prior's NLL on the validation rows, in the model's units (parameters standardised with the
# training rows' mean and standard deviation).
with h5py.File(f"{w}/train.h5") as f:
    train = f["params"][...].astype(np.float64)
with h5py.File(f"{w}/val.h5") as f:
    val = f["params"][...].astype(np.float64)
z = (val - train.mean(0)) / train.std(0, ddof=1)
prior = float(np.mean(np.sum(0.5 * z ** 2 + 0.5 * math.log(2 * math.pi), axis=1)))
best = rows[2][-1]["best_epoch"]
nll = rows[2][best - 1]["val_loss"]
assert nll < prior - 3.0, ("the validation NLL is not well below the prior's", nll, prior)
print(f"ok: validation NLL {nll:.3f} at the best epoch {best}, the prior's {prior:.3f}")

pp = json.load(open(f"{w}/pp.json"))
for name in ("t_merge", "f_start", "amplitude"):
    v = pp[name]
    assert v["r"] > 0.9, (name, v)
    assert 0.60 <= v["inside_68"] <= 0.76 and 0.90 <= v["inside_95"] <= 0.98, (name, v)
print("ok: held-out rows, " + "; ".join(f"{n} r={v['r']:.3f} inside 68%: {v['inside_68']:.3f}, "
                                         f"95%: {v['inside_95']:.3f}" for n, v in pp.items()))

f32 = lambda x: struct.unpack("f", struct.pack("f", x))[0]
scalars = read_events(f"{w}/np2/tensorboard")
for name in names:
    for split in ("train", "val"):
        series = scalars[f"{split}/mae_{name}"]
        assert [v for _, v in series] == [f32(r[f"{split}_mae_{name}"]) for r in rows[2]], (split, name)
print("ok: TensorBoard has train/mae_* and val/mae_* equal to metrics.jsonl")
PYEOF
"$PY" launch/plot_runs.py "$WORK/np2" --out "$WORK/curves.png" 2>"$WORK/plot.txt" >/dev/null || fail "plot_runs.py"
grep -q "metrics mae_t_merge, mae_f_start, mae_amplitude, mae_phase, mae_damping" "$WORK/plot.txt" \
  || { cat "$WORK/plot.txt"; fail "plot_runs.py did not draw the named metrics"; }
echo "ok: plot_runs.py draws the named metrics"

# Preempted inside epoch 3 (SIGUSR1 to both ranks) and resumed: every step's loss and five
# metrics went into the mid-epoch checkpoint, so the records equal the straight run's bit for bit.
preempt_at_step 700 "$WORK/pre.txt" -- "${P[@]}" --set output.dir="$WORK/pre"
"$MPIEXEC" -n 2 "$BIN" train "${P[@]}" --set output.dir="$WORK/pre" --resume auto >"$WORK/resumed.txt" 2>&1 \
  || { cat "$WORK/resumed.txt"; fail "resuming the preempted run"; }
grep -q "resumed from .*epoch-000002.step-000188.pt" "$WORK/resumed.txt" || { cat "$WORK/resumed.txt"; fail "resume"; }
"$PY" -c "
import runs
keys = [k for k in runs.records('$WORK/np2')[0] if k.startswith(('train_', 'val_')) and not k.endswith('_seconds')]
runs.same_records('$WORK/pre', '$WORK/np2', keys)"
echo "ok: preempted mid-epoch and resumed, the losses and metrics equal the straight run's"

# No host sync per step with the dict contract either: an epoch of 16 steps makes as many host
# syncs (CT_TEST_COUNT_SYNCS) as an epoch of 8.
"$BIN" make-data --out "$WORK/rows4096.h5" -n 4096 -l 256 --seed 14 >/dev/null
syncs() {  # syncs ROWS_FILE NAME: "count count" of the run's 2 epochs
  CT_TEST_COUNT_SYNCS=1 "$MPIEXEC" -n 2 "$BIN" train "${P[@]}" --set data.train="$1" \
    --set output.dir="$WORK/$2" --set train.epochs=2 >"$WORK/$2.txt" 2>&1 || { cat "$WORK/$2.txt"; fail "sync count run"; }
  grep -o "host syncs in epoch [0-9]*: [0-9]*" "$WORK/$2.txt" | awk '{print $NF}' | tr '\n' ' '
}
short=$(syncs "$WORK/val.h5" syncs8)
long=$(syncs "$WORK/rows4096.h5" syncs16)
[[ -n "$short" && "$short" == "$long" ]] || fail "host syncs grow with the steps: $short (8 steps) vs $long (16 steps)"
echo "ok: host syncs per epoch $short at 8 and 16 steps"

# Bad input: modules that break the contract, files that break data.fields, a monitor that
# names nothing. (torch.jit.script reads the class's source: from a file, not stdin.)
cat >"$WORK/bad_models.py" <<'PYEOF'
import sys, h5py, numpy as np, torch
from typing import Dict
w = sys.argv[1]

class Bad(torch.nn.Module):
    def __init__(self, kind: str):
        super().__init__()
        self.kind = kind
        self.net = torch.nn.Linear(256, 5)

    def forward(self, batch: Dict[str, torch.Tensor]) -> Dict[str, torch.Tensor]:
        y = self.net(batch["strain"])
        err = (y - batch["params"]) ** 2
        out = {"mean": y}
        if self.kind != "no_loss":
            out["loss"] = err.sum(1) if self.kind == "rows_loss" else err.mean()
        if self.kind == "odd_entry":
            out["per_param"] = err.mean(0)  # [5]: neither a scalar nor batched
        if self.kind == "collision":
            out["seconds"] = err.mean()  # train_seconds, val_seconds: the record's own fields
        return out

for kind in ("no_loss", "rows_loss", "odd_entry", "collision"):
    torch.jit.script(Bad(kind)).save(f"{w}/{kind}.pt")
with h5py.File(f"{w}/train.h5") as f, h5py.File(f"{w}/no_params.h5", "w") as a, h5py.File(f"{w}/short.h5", "w") as b:
    a["input"] = f["input"][:512]
    b["input"] = f["input"][:512]
    b["params"] = f["params"][:500]
PYEOF
"$PY" "$WORK/bad_models.py" "$WORK" || fail "writing the bad modules"
B=(--config configs/pe/pe.yaml --set data.train="$WORK/val.h5" --set data.val="$WORK/test.h5" --set train.epochs=1)
expect_failure 2 "forward returned no 'loss' (entries: 'mean')" -- "$MPIEXEC" -n 2 "$BIN" train "${B[@]}" \
  --set model.path="$WORK/no_loss.pt" --set output.dir="$WORK/bad1"
expect_failure 2 "returned 'loss' shaped \[2\], one value per row: the loss must be a scalar" -- "$MPIEXEC" -n 2 \
  "$BIN" train "${B[@]}" --set model.path="$WORK/rows_loss.pt" --set output.dir="$WORK/bad2"
expect_failure 2 "returned 'per_param' shaped \[5\] for a batch of 2 rows" -- "$MPIEXEC" -n 2 "$BIN" train "${B[@]}" \
  --set model.path="$WORK/odd_entry.pt" --set output.dir="$WORK/bad3"
expect_failure 2 "metric 'seconds': its column 'train_seconds' collides" -- "$MPIEXEC" -n 2 "$BIN" train "${B[@]}" \
  --set model.path="$WORK/collision.pt" --set output.dir="$WORK/bad4"
expect_failure 3 "no_params.h5' has no dataset 'params'" -- "$MPIEXEC" -n 2 "$BIN" train "${B[@]}" \
  --set model.path="$WORK/pe.pt" --set data.train="[$WORK/val.h5, $WORK/no_params.h5]" --set output.dir="$WORK/bad5"
expect_failure 3 "short.h5': dataset 'input' (field 'strain') has 512 rows but 'params' (field 'params') has 500" \
  -- "$MPIEXEC" -n 2 "$BIN" train "${B[@]}" --set model.path="$WORK/pe.pt" --set data.train="$WORK/short.h5" \
  --set output.dir="$WORK/bad6"
expect_failure 2 "'train.monitor' is 'val/accuracy', which names nothing the model records; choose one of val/loss" \
  -- "$MPIEXEC" -n 2 "$BIN" train "${B[@]}" --set model.path="$WORK/pe.pt" --set train.monitor=val/accuracy \
  --set output.dir="$WORK/bad7"
echo "ok: pe"
