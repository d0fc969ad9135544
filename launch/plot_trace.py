#!/usr/bin/env python3
"""A picture of a run's timeline trace (output.trace.steps), for where Perfetto's UI is not at
hand: one row per rank and thread, a bar per span coloured by phase, each rank's buckets in
flight on a row of their own.

    python3 launch/plot_trace.py RUN_DIR [--steps FIRST LAST] [--out PNG]

Reads RUN_DIR/trace/rank-<r>.json (Python's JSON reader; no clustertrain needed) and writes
RUN_DIR/trace/timeline.png (or --out). --steps: the global steps to show (default: the first
three traced), with whatever ran between them on any thread.
"""
import argparse
import glob
import json
import os

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

COLOURS = {"stop check": "#bbbbbb", "batch": "#8c564b", "forward": "#1f77b4", "backward": "#ff7f0e",
           "gradient wait": "#d62728", "optimizer": "#2ca02c", "all-reduce": "#9467bd", "read": "#e377c2",
           "validation": "#17becf", "checkpoint": "#7f7f7f", "best model": "#7f7f7f", "bucket in flight": "#c5b0d5"}
BACKGROUND = {"step", "epoch end", "graph replay"}  # drawn as a frame behind what they hold


def load(run):
    paths = sorted(glob.glob(os.path.join(run, "trace", "rank-*.json")),
                   key=lambda p: int(os.path.basename(p)[5:-5]))
    if not paths:
        raise SystemExit(f"no trace in {run}/trace: train with output.trace.steps=[first, last]")
    out = []
    for path in paths:
        with open(path) as f:
            out.append(json.load(f))
    return out


def window(traces, steps):
    """The time span [t0, t1] (us) of the steps shown."""
    spans = [e for t in traces for e in t["traceEvents"] if e["ph"] == "X" and e["name"] == "step"]
    traced = sorted({e["args"]["step"] for e in spans})
    first, last = steps if steps else (traced[0], traced[min(2, len(traced) - 1)])
    shown = [e for e in spans if first <= e["args"]["step"] <= last]
    if not shown:
        raise SystemExit(f"steps {first}-{last} are not in the trace (it holds {traced[0]}-{traced[-1]})")
    return min(e["ts"] for e in shown), max(e["ts"] + e["dur"] for e in shown), first, last


def rows_of(traces, t0, t1):
    """(label, [(start_ms, length_ms, name)]) per rank and thread, then the rank's buckets."""
    rows = []
    for trace in traces:
        rank = trace["otherData"]["rank"]
        names = {e["tid"]: e["args"]["name"] for e in trace["traceEvents"] if e["name"] == "thread_name"}
        for tid, thread in sorted(names.items()):
            bars = [((e["ts"] - t0) / 1e3, e["dur"] / 1e3, e["name"]) for e in trace["traceEvents"]
                    if e["ph"] == "X" and e["tid"] == tid and e["ts"] < t1 and e["ts"] + e["dur"] > t0]
            if bars:
                rows.append((f"rank {rank} {thread}", bars))
        begun, flights = {}, []
        for e in sorted((e for e in trace["traceEvents"] if e["ph"] in "be"), key=lambda e: e["ts"]):
            if e["ph"] == "b":
                begun[e["id"]] = e
            elif e["id"] in begun:
                b = begun.pop(e["id"])
                if b["ts"] < t1 and e["ts"] > t0:
                    flights.append(((b["ts"] - t0) / 1e3, (e["ts"] - b["ts"]) / 1e3, e["name"]))
        if flights:
            rows.append((f"rank {rank} buckets in flight", flights))
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("run")
    parser.add_argument("--steps", nargs=2, type=int, metavar=("FIRST", "LAST"))
    parser.add_argument("--out")
    args = parser.parse_args()
    traces = load(args.run)
    t0, t1, first, last = window(traces, args.steps)
    rows = rows_of(traces, t0, t1)
    fig, ax = plt.subplots(figsize=(12, 0.55 * len(rows) + 1.6))
    seen = set()
    for y, (_, bars) in enumerate(reversed(rows)):
        for start, length, name in bars:
            background = name in BACKGROUND
            ax.barh(y, length, left=start, height=0.9 if background else 0.6,
                    color="none" if background else COLOURS.get(name, "#aaaaaa"),
                    edgecolor="#444444" if background else "none", linewidth=0.6,
                    label=None if background or name in seen else name)
            seen.add(name)
    ax.set_yticks(range(len(rows)))
    ax.set_yticklabels([label for label, _ in reversed(rows)])
    ax.set_xlim(0, (t1 - t0) / 1e3)
    ax.set_xlabel(f"ms from the start of step {first} (frames: steps)")
    ax.set_title(f"{os.path.basename(os.path.abspath(args.run))}: global steps {first}-{last}, "
                 f"{len(traces)} rank(s)")
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.18 - 0.6 / len(rows)), ncol=6, fontsize=8, frameon=False)
    fig.tight_layout()
    out = args.out or os.path.join(args.run, "trace", "timeline.png")
    fig.savefig(out, dpi=110)
    print(out)


if __name__ == "__main__":
    main()
