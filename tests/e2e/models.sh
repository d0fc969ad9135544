# Models users bring and results Python reads:
#   - vae_mlp and vae_conv1d train on 2 ranks; model.pt and the checkpoint's model part load into
#     the same modules written in PyTorch (reference_models.py) with strict names; `predict`
#     (2 ranks) equals PyTorch's forward pass on those weights;
#   - a TorchScript module scripted with python3-torch (configs/torchscript/make_model.py) trains
#     under mpiexec -n 2; model.pt loads into the Python class, model.ts with torch.jit.load, and
#     both give predict's numbers;
#   - a module with BatchNorm buffers returning a dict trains, saves and predicts with them;
#   - bf16 autocast and the bf16 gradient all-reduce train to within a few percent of fp32;
#   - modules that break the calling convention are refused with a message saying how.
source "$(dirname "$0")/common.sh"
need_python
tiny_data "$WORK" 2048
HERE=$(cd "$(dirname "$0")" && pwd)
T=(--config configs/tiny.yaml --set data.train="$WORK/train.h5" --set data.val="$WORK/val.h5" --set train.epochs=2)

train_and_predict() {  # NAME [--set ...]: trains into $WORK/NAME, predicts the val file into $WORK/NAME.h5
  local name=$1
  shift
  "$MPIEXEC" -n 2 "$BIN" train "${T[@]}" --set output.dir="$WORK/$name" "$@" >"$WORK/$name.txt" 2>&1 \
    || { cat "$WORK/$name.txt"; fail "training $name"; }
  "$MPIEXEC" -n 2 "$BIN" predict --checkpoint "$WORK/$name/checkpoints/epoch-000002.pt" --data "$WORK/val.h5" \
    --out "$WORK/$name.h5" --batch 100 >/dev/null 2>&1 || fail "predict $name"
}
train_and_predict mlp
train_and_predict conv --set model.kind=vae_conv1d --set model.channels=[8,16,16] --set model.kernel_size=5
"$PY" configs/torchscript/make_model.py --length 256 --width 64 --latent 8 --out "$WORK/residual.pt" >/dev/null
train_and_predict script --set model.kind=torchscript --set model.path="$WORK/residual.pt"
grep -q "model: torchscript module" "$WORK/script.txt" || fail "no torchscript model line"

"$PY" - "$WORK" "$HERE" <<'PYEOF'
import sys, warnings, h5py, numpy as np, torch
w, here = sys.argv[1], sys.argv[2]
sys.path.insert(0, here + "/../../configs/torchscript")
from reference_models import VaeMlp, VaeConv1d
from make_model import ResidualVae
warnings.filterwarnings("ignore", "'torch.load' received a zip file")
models = {
    "mlp": VaeMlp(256, [128, 64], 8),
    "conv": VaeConv1d([256], [8, 16, 16], 5, 2, 8),
    "script": ResidualVae(256, 64, 2, 8),
}
with h5py.File(w + "/val.h5") as f:
    x = torch.from_numpy(f["input"][...])
for name, module in models.items():
    state = torch.load(f"{w}/{name}/model.pt")
    assert list(state) == list(module.state_dict()), (name, list(state), list(module.state_dict()))
    module.load_state_dict(state, strict=True)
    checkpoint = torch.load(f"{w}/{name}/checkpoints/epoch-000002.pt").model.state_dict()
    assert set(checkpoint) == set(state) and all(torch.equal(checkpoint[k], state[k]) for k in state), name
    module.eval()
    with torch.no_grad():
        recon, mu, _ = module(x)
    with h5py.File(f"{w}/{name}.h5") as f:
        got_recon, got_mu = torch.from_numpy(f["recon"][...]), torch.from_numpy(f["mu"][...])
    for what, a, b in (("recon", got_recon, recon), ("mu", got_mu, mu)):
        err = (a - b).abs().max().item()
        assert torch.allclose(a, b, rtol=1e-4, atol=1e-5), (name, what, err)
    print(f"ok: {name}: model.pt and the checkpoint load with Python's names; predict equals PyTorch's forward "
          f"(max |diff| recon {(got_recon - recon).abs().max().item():.1e}, mu {(got_mu - mu).abs().max().item():.1e})")
scripted = torch.jit.load(w + "/script/model.ts")
scripted.eval()
with torch.no_grad():
    a, b = scripted(x)[0], models["script"](x)[0]
assert torch.allclose(a, b, rtol=1e-5, atol=1e-6), (a - b).abs().max()
print("ok: model.ts (the trained TorchScript module) equals the Python class with model.pt's weights")
PYEOF

# A module with buffers (BatchNorm running statistics) that returns a dict: the buffers are
# trained, saved under Python's names, and used by predict (eval mode).
cat >"$WORK/bn_module.py" <<'PYEOF'
import sys, torch
from torch import nn
from typing import Dict
class BnAutoencoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(256, 32), nn.BatchNorm1d(32), nn.ReLU())
        self.decoder = nn.Linear(32, 256)
    def forward(self, x) -> Dict[str, torch.Tensor]:
        return {"recon": self.decoder(self.encoder(x))}
if __name__ == "__main__":
    torch.jit.script(BnAutoencoder()).save(sys.argv[1])
PYEOF
"$PY" "$WORK/bn_module.py" "$WORK/bn.pt"
train_and_predict bn --set model.kind=torchscript --set model.path="$WORK/bn.pt"
"$PY" - "$WORK" <<'PYEOF'
import sys, warnings, h5py, torch
import runs
w = sys.argv[1]
sys.path.insert(0, w)
from bn_module import BnAutoencoder
warnings.filterwarnings("ignore", "'torch.load' received a zip file")
module = BnAutoencoder()
state = torch.load(f"{w}/bn/model.pt")
module.load_state_dict(state, strict=True)
steps = runs.last(f"{w}/bn")["global_step"]
bn = module.encoder[1]
assert bn.num_batches_tracked.item() == steps, (bn.num_batches_tracked.item(), steps)
assert bn.running_mean.abs().sum() > 0 and not torch.allclose(bn.running_var, torch.ones(32)), "running stats untrained"
module.eval()
with h5py.File(w + "/val.h5") as f:
    x = torch.from_numpy(f["input"][...])
with torch.no_grad():
    recon = module(x)["recon"]
with h5py.File(w + "/bn.h5") as f:
    assert set(f) == {"recon"}, set(f)
    got = torch.from_numpy(f["recon"][...])
assert torch.allclose(got, recon, rtol=1e-4, atol=1e-5), (got - recon).abs().max()
print(f"ok: BatchNorm module returning a dict: running statistics trained ({steps} batches) and saved; predict "
      f"uses them (max |diff| {(got - recon).abs().max().item():.1e}), no mu for a module without one")
PYEOF

# bf16: autocast forward, and gradients all-reduced as bf16.
"$MPIEXEC" -n 2 "$BIN" train "${T[@]}" --set train.epochs=4 --set output.dir="$WORK/fp32" >/dev/null
"$MPIEXEC" -n 2 "$BIN" train "${T[@]}" --set train.epochs=4 --set train.precision=bf16 \
  --set runtime.allreduce_precision=bf16 --set output.dir="$WORK/bf16" >"$WORK/bf16.txt" 2>&1
grep -q "precision bf16" "$WORK/bf16.txt" && grep -q "sent as bf16" "$WORK/bf16.txt" || { cat "$WORK/bf16.txt"; fail "bf16 not reported"; }
"$PY" - "$WORK" <<'PYEOF'
import sys
import runs
w = sys.argv[1]
a, b = runs.last(f"{w}/fp32"), runs.last(f"{w}/bf16")
assert abs(a["val_loss"] - b["val_loss"]) <= 0.05 * a["val_loss"], (a["val_loss"], b["val_loss"])
assert a["val_loss"] != b["val_loss"], "bf16 changed nothing"
print(f"ok: bf16 val loss {b['val_loss']:.5f} vs fp32 {a['val_loss']:.5f} after 4 epochs")
PYEOF

# Modules that break the calling convention (scripting reads their source: a file, not stdin).
cat >"$WORK/bad_modules.py" <<'PYEOF'
import sys, torch
from torch import nn
w = sys.argv[1]
class Pair(nn.Module):
    def __init__(self):
        super().__init__(); self.f = nn.Linear(256, 256)
    def forward(self, x):
        return self.f(x), x
class TwoInputs(nn.Module):
    def __init__(self):
        super().__init__(); self.f = nn.Linear(256, 256)
    def forward(self, x, y):
        return self.f(x) + y
class Short(nn.Module):
    def __init__(self):
        super().__init__(); self.f = nn.Linear(256, 100)
    def forward(self, x):
        return self.f(x)
for name, module in (("pair", Pair()), ("two", TwoInputs()), ("short", Short())):
    torch.jit.script(module).save(f"{w}/{name}.pt")
open(f"{w}/junk.pt", "w").write("not a module")
PYEOF
"$PY" "$WORK/bad_modules.py" "$WORK"
S=(--set model.kind=torchscript --set output.dir="$WORK/bad")
expect_failure 2 "forward returned a tuple of 2 values" -- "$MPIEXEC" -n 2 "$BIN" train "${T[@]}" "${S[@]}" --set model.path="$WORK/pair.pt"
expect_failure 2 "forward takes 2 inputs besides self" -- "$MPIEXEC" -n 2 "$BIN" train "${T[@]}" "${S[@]}" --set model.path="$WORK/two.pt"
expect_failure 2 "it must match the target rows \[2, 256\]" -- "$MPIEXEC" -n 2 "$BIN" train "${T[@]}" "${S[@]}" --set model.path="$WORK/short.pt"
expect_failure 2 "cannot be loaded as a TorchScript module" -- "$MPIEXEC" -n 2 "$BIN" train "${T[@]}" "${S[@]}" --set model.path="$WORK/junk.pt"
expect_failure 2 "model.path is empty" -- "$MPIEXEC" -n 2 "$BIN" train "${T[@]}" --set model.kind=torchscript
expect_failure 2 "model.path': file '.*missing.pt' does not exist .*torch.jit.script(model).save(path)" -- \
  "$BIN" train "${T[@]}" --set model.kind=torchscript --set model.path="$WORK/missing.pt"
"$PY" -c "import h5py, numpy as np, sys; f = h5py.File(sys.argv[1], 'w'); f['input'] = np.zeros((512, 256), 'f4'); f['target'] = np.zeros((512, 128), 'f4')" "$WORK/uneven.h5"
expect_failure 2 "input rows are \[256\] and target rows \[128\]" -- "$MPIEXEC" -n 2 "$BIN" train "${T[@]}" \
  --set model.kind=vae_conv1d --set data.train="$WORK/uneven.h5" --set data.val="$WORK/uneven.h5"
# Rows the built-in models cannot take are refused before anything is sized by them (a dataset
# [N] of single values once crashed vae_conv1d's memory estimate), each with its fix.
"$PY" -c "import h5py, numpy as np, sys; f = h5py.File(sys.argv[1], 'w'); f['input'] = f['target'] = np.zeros(512, 'f4')" "$WORK/single.h5"
"$PY" -c "import h5py, numpy as np, sys; f = h5py.File(sys.argv[1], 'w'); f['input'] = f['target'] = np.zeros((512, 2, 3, 16), 'f4')" "$WORK/cubes.h5"
for kind in vae_mlp vae_conv1d; do
  R=(--set model.kind=$kind --set output.dir="$WORK/rows_$kind")
  expect_failure 2 "model.kind=$kind takes rows .* but the rows are \[\] (one value per row: the dataset is \[N\]); store each row's L values, as \[N, L\]" \
    -- "$MPIEXEC" -n 2 "$BIN" train "${T[@]}" "${R[@]}" --set data.train="$WORK/single.h5" --set data.val="$WORK/single.h5"
  expect_failure 2 "model.kind=$kind takes rows .* but the rows are \[2,3,16\]; store the rows as .*model.kind=torchscript" \
    -- "$MPIEXEC" -n 2 "$BIN" train "${T[@]}" "${R[@]}" --set data.train="$WORK/cubes.h5" --set data.val="$WORK/cubes.h5"
done

# predict's bad inputs.
"$PY" -c "import h5py, numpy as np, sys; h5py.File(sys.argv[1], 'w')['input'] = np.zeros((64, 128), 'f4')" "$WORK/short_rows.h5"
P=(predict --checkpoint "$WORK/mlp/checkpoints/epoch-000002.pt" --data "$WORK/val.h5")
expect_failure 2 "pass --force" -- "$BIN" "${P[@]}" --out "$WORK/mlp.h5"
expect_failure 3 "no dataset 'strain'" -- "$MPIEXEC" -n 2 "$BIN" "${P[@]}" --out "$WORK/p.h5" --set data.input_key=strain
# The weights a run directory holds (model.pt, best.pt: state dicts, the files the run's last log
# lines name) predict with the run's config.yaml beside them, exactly as the checkpoint of the same
# epoch does (2 epochs: model.pt is epoch 2's weights); a copy of them alone is refused with the
# way out, as are weights of another shape and a file that is neither.
for name in conv script; do
  "$MPIEXEC" -n 2 "$BIN" predict --checkpoint "$WORK/$name/model.pt" --data "$WORK/val.h5" --out "$WORK/${name}_weights.h5" --batch 100 \
    >"$WORK/weights.txt" 2>&1 || { cat "$WORK/weights.txt"; fail "predict from $name/model.pt"; }
  "$PY" - "$WORK/$name.h5" "$WORK/${name}_weights.h5" <<'PYEOF'
import sys, h5py, numpy as np
with h5py.File(sys.argv[1]) as a, h5py.File(sys.argv[2]) as b:
    assert sorted(a) == sorted(b), (list(a), list(b))
    for key in a:
        assert np.array_equal(a[key][...], b[key][...]), key
PYEOF
done
echo "ok: predict from a run's model.pt equals predict from its last checkpoint (vae_conv1d, TorchScript)"
mkdir -p "$WORK/lone" && cp "$WORK/mlp/best.pt" "$WORK/lone/"
expect_failure 2 "'$WORK/lone/best.pt' holds a model's weights (a state dict.*no config.yaml beside it.*give a checkpoint" \
  -- "$MPIEXEC" -n 2 "$BIN" predict --checkpoint "$WORK/lone/best.pt" --data "$WORK/val.h5" --out "$WORK/p.h5"
expect_failure 2 "the weights '$WORK/mlp/best.pt' hold 'encoder.0.weight' of shape \[128, 256\], but this model's is \[128, 128\]" \
  -- "$MPIEXEC" -n 2 "$BIN" predict --checkpoint "$WORK/mlp/best.pt" --data "$WORK/short_rows.h5" --out "$WORK/p.h5"
# A TorchScript run's module file is named by its config: moved, predict says how to point at it.
mv "$WORK/residual.pt" "$WORK/residual_moved.pt"
expect_failure 2 "model.path '$WORK/residual.pt' (from the config in checkpoint .*) does not exist: .*--set model.path=" \
  -- "$MPIEXEC" -n 2 "$BIN" predict --checkpoint "$WORK/script/checkpoints/epoch-000002.pt" --data "$WORK/val.h5" --out "$WORK/p.h5"
"$MPIEXEC" -n 2 "$BIN" predict --checkpoint "$WORK/script/checkpoints/epoch-000002.pt" --data "$WORK/val.h5" \
  --out "$WORK/script_moved.h5" --batch 100 --set model.path="$WORK/residual_moved.pt" >/dev/null 2>&1 \
  || fail "predict with --set model.path at the module's new place"
mv "$WORK/residual_moved.pt" "$WORK/residual.pt"
expect_failure 3 "checkpoint '$WORK/mlp/metrics.jsonl' is damaged: not a readable ZIP archive" -- "$MPIEXEC" -n 2 "$BIN" predict \
  --checkpoint "$WORK/mlp/metrics.jsonl" --data "$WORK/val.h5" --out "$WORK/p.h5"
expect_failure 2 "give predict rows shaped like the training rows" -- "$MPIEXEC" -n 2 "$BIN" predict \
  --checkpoint "$WORK/conv/checkpoints/epoch-000002.pt" --data "$WORK/short_rows.h5" --out "$WORK/p.h5"
[[ ! -e "$WORK/p.h5" ]] || fail "a failed predict left its output"
# Resuming into other conv layers (another number of parameter tensors), even when config changes
# are allowed: the models' message, before LibTorch's optimizer would refuse the state.
expect_failure 2 "holds a vae_conv1d .* resume with the same model settings" -- "$MPIEXEC" -n 2 "$BIN" train "${T[@]}" \
  --set output.dir="$WORK/conv" --set model.kind=vae_conv1d --set model.channels=[8,16] --set train.epochs=3 \
  --resume auto --allow-config-changes
