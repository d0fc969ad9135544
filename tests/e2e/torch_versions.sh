# Two LibTorch versions side by side: this build (BIN, e.g. LibTorch 2.x from pip) and another
# (CT_OTHER_BIN, e.g. Debian's 1.13.1), with a Python of each (PY and CT_OTHER_PYTHON; only torch
# is needed of them). 1) A 2-rank run trains to the same losses in both, to float32 rounding;
# 2) each version's model.pt loads in both Pythons' torch.load (2.6+ defaults to weights_only);
# 3) each version resumes the other's checkpoint and continues as the other would have.
# Skipped unless CMake was given CT_OTHER_BIN (launch/test.sh --torch pip does that).
source "$(dirname "$0")/common.sh"
OTHER_BIN=${CT_OTHER_BIN:-}
OTHER_PY=${CT_OTHER_PYTHON:-}
THIS_PY=${CT_THIS_PYTHON:-$PY}
if [[ -z "$OTHER_BIN" || ! -x "$OTHER_BIN" ]]; then
  echo "skipped: no clustertrain built against another LibTorch (configure with -DCT_OTHER_BIN=...)"
  exit 77
fi
version() { "$1" --version | head -1; }
echo "this: $BIN ($("$THIS_PY" -c 'import torch; print("torch", torch.__version__)' 2>/dev/null | tail -1))"
echo "other: $OTHER_BIN ($("$OTHER_PY" -c 'import torch; print("torch", torch.__version__)' 2>/dev/null | tail -1))"
tiny_data "$WORK" 2048
T=(--config configs/tiny.yaml --set data.train="$WORK/train.h5" --set data.val="$WORK/val.h5")
run() {  # run BINARY DIR EPOCHS [args...]
  local bin=$1 dir=$2 epochs=$3
  shift 3
  "$MPIEXEC" -n 2 "$bin" train "${T[@]}" --set output.dir="$WORK/$dir" --set train.epochs="$epochs" "$@" \
    >"$WORK/$dir.txt" 2>&1 || { cat "$WORK/$dir.txt"; fail "$dir: training failed"; }
}
run "$BIN" this 3
run "$OTHER_BIN" other 3
run "$BIN" this4 4
run "$OTHER_BIN" other4 4
# Each version resumes the other's epoch-3 checkpoint.
cp -r "$WORK/other" "$WORK/other-by-this"
cp -r "$WORK/this" "$WORK/this-by-other"
run "$BIN" other-by-this 4 --resume auto
run "$OTHER_BIN" this-by-other 4 --resume auto
grep -q "resumed from .*epoch-000003.pt" "$WORK/other-by-this.txt" || fail "this build did not resume the other's checkpoint"
grep -q "resumed from .*epoch-000003.pt" "$WORK/this-by-other.txt" || fail "the other build did not resume this one's checkpoint"

"$PY" - "$WORK" <<'PYEOF'
import sys
import runs
w = sys.argv[1]
rows = lambda run: runs.records(f"{w}/{run}")
def close(a, b, what):
    assert len(a) == len(b), (what, len(a), len(b))
    for x, y in zip(a, b):
        for k in ["train_loss", "train_mse", "train_kl", "val_loss", "val_mse", "val_kl"]:
            assert abs(x[k] - y[k]) <= 1e-5 * abs(y[k]) + 1e-9, (what, x["epoch"], k, x[k], y[k])
        assert x["lr"] == y["lr"] and x["global_step"] == y["global_step"], (what, x, y)
close(rows("this"), rows("other"), "3 epochs, this vs other")
# A resumed run continues as the version it was resumed by would have run on.
close(rows("other-by-this"), rows("this4"), "other's checkpoint resumed by this")
close(rows("this-by-other"), rows("other4"), "this one's checkpoint resumed by the other")
print("ok: the same losses to float32 rounding (1e-5 relative) in both versions, and across resumes")
PYEOF
for py in "$THIS_PY" "$OTHER_PY"; do
  "$py" - "$WORK" <<'PYEOF' 2>&1 | grep -v Warning | grep -v "^  cpu = " || fail "torch.load with $py"
import sys, torch
w = sys.argv[1]
a, b = torch.load(f"{w}/this/model.pt"), torch.load(f"{w}/other/model.pt")
assert isinstance(a, dict) and a.keys() == b.keys() and len(a) > 0, (a.keys(), b.keys())
for k in a:
    assert a[k].shape == b[k].shape and torch.allclose(a[k], b[k], rtol=1e-4, atol=1e-6), k
print(f"ok: torch {torch.__version__}: torch.load reads both versions' model.pt ({len(a)} tensors, equal to 1e-4)")
PYEOF
done
