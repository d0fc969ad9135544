#!/usr/bin/env python3
"""Loss curves of one or several runs on one PNG, from their metrics.jsonl.

    launch/plot_runs.py RUN_DIR [RUN_DIR ...] [--out FILE.png]

Four panels against epoch: train and val loss (the best epoch starred), lr, samples/s, and the
time split of an epoch (data, compute, comm, validation). The plateau's lr drops are marked by
dotted lines in every panel. The default output is the first run's curves.png. Needs matplotlib
(Debian: python3-matplotlib).
"""
import argparse
import json
import os
import sys


def load(run_dir):
    path = os.path.join(run_dir, "metrics.jsonl")
    try:
        rows = [json.loads(line) for line in open(path) if line.strip()]
    except OSError as e:
        sys.exit(f"plot_runs: cannot read {path}: {e.strerror}; give the run directory of a training run (output.dir)")
    if not rows:
        sys.exit(f"plot_runs: {path} has no epochs yet")
    return rows


def lr_drops(rows):
    """The epochs after which the lr went down (ReduceLROnPlateau), by the lr each epoch used."""
    return [b["epoch"] - 0.5 for a, b in zip(rows, rows[1:]) if b["lr"] < a["lr"]]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("runs", nargs="+", metavar="RUN_DIR", help="run directories (output.dir) to draw")
    parser.add_argument("--out", help="the PNG to write (default: RUN_DIR/curves.png of the first run)")
    args = parser.parse_args()
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        import matplotlib.ticker
    except ImportError:
        sys.exit("plot_runs: needs matplotlib (apt-get install python3-matplotlib, or pip install matplotlib)")
    runs = [(os.path.basename(os.path.normpath(r)) or r, load(r)) for r in args.runs]
    out = args.out or os.path.join(args.runs[0], "curves.png")

    fig, axes = plt.subplots(2, 2, figsize=(11, 7.5), sharex=True)
    loss, lr, speed, split = axes.flat
    for i, (name, rows) in enumerate(runs):
        color = f"C{i}"
        epochs = [r["epoch"] for r in rows]
        label = name if len(runs) > 1 else None
        loss.plot(epochs, [r["train_loss"] for r in rows], color=color, linestyle="--",
                  label=f"{name} train" if label else "train")
        loss.plot(epochs, [r["val_loss"] for r in rows], color=color, label=f"{name} val" if label else "val")
        best = rows[-1].get("best_epoch", 0)
        if best:
            loss.plot([best], [rows[best - 1]["val_loss"]], marker="*", markersize=12, color=color, linestyle="none")
        lr.plot(epochs, [r["lr"] for r in rows], color=color, label=label)
        speed.plot(epochs, [r["samples_per_s"] for r in rows], color=color, label=label)
        for key, style in [("data_seconds", ":"), ("compute_seconds", "-"), ("comm_seconds", "--"), ("val_seconds", "-.")]:
            split.plot(epochs, [r[key] for r in rows], color=color, linestyle=style,
                       label=key.replace("_seconds", "") if i == 0 else None)
        for ax in axes.flat:
            for drop in lr_drops(rows):
                ax.axvline(drop, color=color, linestyle=":", linewidth=0.8, alpha=0.7)
    loss.set_yscale("log")
    loss.set_ylabel("loss (log)")
    loss.set_title("train and val loss (* best epoch, dotted: lr drops)")
    lr.set_yscale("log")
    lr.set_ylabel("lr (log)")
    lr.set_title("learning rate")
    speed.set_ylabel("samples/s")
    speed.set_title("throughput")
    split.set_ylabel("seconds per epoch")
    split.set_title("where an epoch's time goes")
    for ax in axes[1]:
        ax.set_xlabel("epoch")
        ax.xaxis.set_major_locator(matplotlib.ticker.MaxNLocator(integer=True))
    for ax in axes.flat:
        ax.grid(alpha=0.3)
        if ax.get_legend_handles_labels()[0]:
            ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out, dpi=100)
    print(out)


if __name__ == "__main__":
    main()
