#!/usr/bin/env python3
"""Loss curves of one or several runs on one PNG, from their metrics.jsonl.

    launch/plot_runs.py RUN_DIR [RUN_DIR ...] [--out FILE.png]

Six panels against epoch: train and val loss (the best epoch starred), the model's named metrics
(val_<name> of metrics.jsonl, train dashed: mse and kl for a VAE, mae_* for the
parameter-estimation example), lr, samples/s, and the time split of an epoch (data, compute,
comm, validation). The plateau's lr drops are marked by dotted lines in every panel. The default
output is the first run's curves.png. Needs matplotlib (Debian: python3-matplotlib).
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


def metric_names(rows):
    """The model's metrics, in the record's order: val_<name> besides val_loss and the timings."""
    return [k[4:] for k in rows[0] if k.startswith("val_") and k != "val_loss" and not k.endswith("_seconds")]


def scale_for(ax, values):
    """Log scale for positive values (losses, errors); linear where a value is <= 0 (an NLL)."""
    ax.set_yscale("log" if values and min(values) > 0 else "linear")


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

    fig, axes = plt.subplots(3, 2, figsize=(11, 10), sharex=True)
    loss, metrics, lr, speed, split, unused = axes.flat
    unused.set_visible(False)
    losses, metric_values, drawn = [], [], []
    for i, (name, rows) in enumerate(runs):
        color = f"C{i}"
        epochs = [r["epoch"] for r in rows]
        label = name if len(runs) > 1 else None
        loss.plot(epochs, [r["train_loss"] for r in rows], color=color, linestyle="--",
                  label=f"{name} train" if label else "train")
        loss.plot(epochs, [r["val_loss"] for r in rows], color=color, label=f"{name} val" if label else "val")
        losses += [r[k] for r in rows for k in ("train_loss", "val_loss") if r.get(k) is not None]
        for j, metric in enumerate(metric_names(rows)):
            style = {"color": f"C{(i * 5 + j) % 10}"}
            metrics.plot(epochs, [r[f"val_{metric}"] for r in rows], label=f"{name} {metric}" if label else metric,
                         **style)
            metrics.plot(epochs, [r[f"train_{metric}"] for r in rows], linestyle="--", **style)
            metric_values += [r[k] for r in rows for k in (f"val_{metric}", f"train_{metric}") if r.get(k) is not None]
            drawn.append(metric)
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
    scale_for(loss, losses)
    loss.set_ylabel(f"loss ({loss.get_yscale()})")
    loss.set_title("train and val loss (* best epoch, dotted: lr drops)")
    scale_for(metrics, metric_values)
    metrics.set_ylabel(f"metric ({metrics.get_yscale()})")
    metrics.set_title("the model's metrics: val (train dashed)" if drawn else "the model records no metrics")
    lr.set_yscale("log")
    lr.set_ylabel("lr (log)")
    lr.set_title("learning rate")
    speed.set_ylabel("samples/s")
    speed.set_title("throughput")
    split.set_ylabel("seconds per epoch")
    split.set_title("where an epoch's time goes")
    for ax in (split, speed):
        ax.set_xlabel("epoch")
        ax.xaxis.set_major_locator(matplotlib.ticker.MaxNLocator(integer=True))
    for ax in axes.flat:
        ax.grid(alpha=0.3)
        if ax.get_legend_handles_labels()[0]:
            ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out, dpi=100)
    if drawn:
        print(f"plot_runs: metrics {', '.join(dict.fromkeys(drawn))}", file=sys.stderr)
    print(out)


if __name__ == "__main__":
    main()
