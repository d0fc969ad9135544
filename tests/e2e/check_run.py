"""Checks a clustertrain run directory the way a Python user reads it."""
import argparse
import math
import sys

import torch

import runs
from reference_models import VaeMlp

FIELDS = ["epoch", "global_step", "train_loss", "train_mse", "train_kl", "val_loss", "val_mse", "val_kl", "lr",
          "global_batch", "world_size", "samples_per_s", "train_seconds", "val_seconds", "epoch_seconds",
          "data_seconds", "compute_seconds", "comm_seconds"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("run")
    ap.add_argument("--epochs", type=int, required=True)
    ap.add_argument("--length", type=int, required=True)
    ap.add_argument("--hidden", type=int, nargs="+", required=True)
    ap.add_argument("--latent", type=int, required=True)
    ap.add_argument("--world-size", type=int, required=True)
    a = ap.parse_args()

    rows = runs.records(a.run)
    assert len(rows) == a.epochs, f"{len(rows)} metrics rows, expected {a.epochs}"
    for row in rows:
        missing = [f for f in FIELDS if f not in row]
        assert not missing, f"metrics.jsonl lacks {missing}"
        assert all(row[f] is not None and math.isfinite(row[f]) for f in FIELDS), row
        assert row["world_size"] == a.world_size, row
    assert [r["epoch"] for r in rows] == list(range(1, a.epochs + 1))
    csv = open(a.run + "/metrics.csv").read().splitlines()
    assert csv[0].split(",") == list(rows[0].keys()), csv[0]
    assert len(csv) == a.epochs + 1, f"metrics.csv has {len(csv) - 1} rows"
    val = [r["val_loss"] for r in rows]
    assert val[-1] < val[0], f"validation loss did not fall: {val}"
    assert abs(rows[0]["val_loss"] - (rows[0]["val_mse"] + 1e-3 * rows[0]["val_kl"])) < 1e-6, rows[0]

    state = torch.load(a.run + "/model.pt")
    model = VaeMlp(a.length, a.hidden, a.latent)
    model.load_state_dict(state, strict=True)  # same names and shapes as the Python module
    with torch.no_grad():
        h = model.encoder(torch.zeros(2, a.length))
        assert h.shape == (2, 2 * a.latent)
    print(f"ok: {len(rows)} epochs, val loss {val[0]:.5f} -> {val[-1]:.5f}, model.pt has {len(state)} tensors")


if __name__ == "__main__":
    sys.exit(main())
