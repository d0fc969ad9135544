"""Scaling study tables, plot and cost model (bench/scaling.sh runs it; stdlib + matplotlib).

  python3 bench/scaling_report.py collect DIR        DIR/runs/{weak,strong}-wW -> results.csv/json
  python3 bench/scaling_report.py render DIR [--compute-ms T] [--grad-mb G]
                                                     -> results.md and scaling.png

The model predicts a data-parallel step on machines we do not have. One all-reduce of G bytes
over W GPUs costs a ring's bandwidth term plus a latency term,

    t_comm(W) = 2 (W-1)/W * G / busbw  +  n_buckets * 2 * ceil(log2 W) * alpha

(NCCL uses trees at scale, hence log2 W hops of latency; busbw is what nccl-tests reports as
"bus bandwidth"). Within a node busbw is NVLink's, across nodes the network's. Without overlap
a step is t_c + t_comm; with overlap, the buckets of all but the last reduce under backward
(about 2/3 of the step's compute), so a step is t_c + max(t_comm / n_buckets, t_comm - 2/3 t_c).
Weak-scaling efficiency is t_c / step. t_c is the measured compute time of one step on one rank
(or --compute-ms, e.g. a GPU's), G the model's gradient bytes.
"""
import argparse
import csv
import glob
import json
import math
import os
import re
import statistics
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "e2e"))
import runs  # noqa: E402  (reading run directories: one copy for tests and benches)

FIELDS = ["mode", "world_size", "threads_per_rank", "batch_per_rank", "global_batch", "lr", "samples_per_s",
          "epoch_seconds", "data_seconds", "compute_seconds", "comm_seconds", "steps_per_epoch",
          "compute_ms_per_step", "efficiency", "core_efficiency", "parameters"]

# nccl-tests bus bandwidths (large all-reduce) and per-hop latencies.
MACHINES = {
    "A100 (8/node: NVLink 230 GB/s, 8x HDR IB 185 GB/s)": dict(gpus_per_node=8, intra=230e9, inter=185e9,
                                                               alpha_intra=5e-6, alpha_inter=15e-6),
    "H100/H200 (8/node: NVLink 450 GB/s, 8x NDR IB 370 GB/s)": dict(gpus_per_node=8, intra=450e9, inter=370e9,
                                                                    alpha_intra=4e-6, alpha_inter=12e-6),
}
BUCKET_BYTES = 25 * 2**20


def collect(out):
    rows = []
    for run in sorted(glob.glob(os.path.join(out, "runs", "*-w*"))):
        if not os.path.isdir(run):
            continue
        mode, world = re.match(r".*/(weak|strong)-w(\d+)$", run).groups()
        records = runs.records(run)
        if len(records) < 2:
            sys.exit(f"{run}: fewer than 2 epochs in metrics.jsonl")
        later = records[1:]  # the first epoch warms up
        median = lambda key: statistics.median(r[key] for r in later)
        steps = records[1]["global_step"] - records[0]["global_step"]
        log = open(run + ".log").read()
        params = int(re.search(r"model: .*, (\d+) parameters", log).group(1))
        threads = int(re.search(r"  threads (\d+)", log).group(1))
        rows.append(dict(mode=mode, world_size=int(world), global_batch=records[-1]["global_batch"],
                         batch_per_rank=records[-1]["global_batch"] // int(world), lr=records[-1]["lr"],
                         samples_per_s=median("samples_per_s"), epoch_seconds=median("train_seconds"),
                         data_seconds=median("data_seconds"), compute_seconds=median("compute_seconds"),
                         comm_seconds=median("comm_seconds"), steps_per_epoch=steps,
                         compute_ms_per_step=1e3 * median("compute_seconds") / steps, parameters=params,
                         threads_per_rank=threads))
    for row in rows:
        base = next(r for r in rows if r["mode"] == row["mode"] and r["world_size"] == 1)
        row["efficiency"] = row["samples_per_s"] / (row["world_size"] * base["samples_per_s"])
        # Per core: where one rank already used every core (CPU nodes), more ranks add none.
        cores, base_cores = row["world_size"] * row["threads_per_rank"], base["threads_per_rank"]
        row["core_efficiency"] = (row["samples_per_s"] / cores) / (base["samples_per_s"] / base_cores)
    rows.sort(key=lambda r: (r["mode"] != "weak", r["world_size"]))
    with open(os.path.join(out, "results.csv"), "w", newline="") as f:
        writer = csv.DictWriter(f, FIELDS, lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
    json.dump(rows, open(os.path.join(out, "results.json"), "w"), indent=1)
    print(f"scaling: {len(rows)} runs -> {out}/results.csv, results.json")


def comm_seconds(world, grad_bytes, m):
    if world == 1:
        return 0.0
    inter = world > m["gpus_per_node"]
    busbw = m["inter"] if inter else m["intra"]
    alpha = m["alpha_inter"] if inter else m["alpha_intra"]
    buckets = max(1, math.ceil(grad_bytes / BUCKET_BYTES))
    return 2 * (world - 1) / world * grad_bytes / busbw + buckets * 2 * math.ceil(math.log2(world)) * alpha


def step_seconds(world, compute, grad_bytes, m, overlap):
    comm = comm_seconds(world, grad_bytes, m)
    if not overlap:
        return compute + comm
    buckets = max(1, math.ceil(grad_bytes / BUCKET_BYTES))
    return compute + max(comm / buckets, comm - 2 / 3 * compute)


def render(out, compute_ms, grad_mb):
    rows = json.load(open(os.path.join(out, "results.json")))
    weak1 = next(r for r in rows if r["mode"] == "weak" and r["world_size"] == 1)
    compute = (compute_ms if compute_ms else weak1["compute_ms_per_step"]) / 1e3
    grad_bytes = grad_mb * 2**20 if grad_mb else weak1["parameters"] * 4
    lines = ["# Scaling study", "",
             f"Measured with `bench/scaling.sh` (`{out}/results.csv`, `results.json`): median of epochs 2 and later; "
             "efficiency = samples/s / (world size x samples/s at 1 rank); per core: the same per thread "
             "(cores), which is the fair measure where one rank already used every core of the node.", ""]
    for mode, what in (("weak", "fixed batch per rank"), ("strong", "fixed global batch")):
        lines += [f"## {mode.capitalize()} scaling ({what})", "",
                  "| ranks | threads/rank | batch/rank | global batch | lr | samples/s | epoch s | data s | compute s "
                  "| comm s | efficiency | per core |",
                  "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
        for r in (r for r in rows if r["mode"] == mode):
            lines.append(f"| {r['world_size']} | {r['threads_per_rank']} | {r['batch_per_rank']} | {r['global_batch']} | "
                         f"{r['lr']:.3g} | {r['samples_per_s']:.0f} | {r['epoch_seconds']:.2f} | "
                         f"{r['data_seconds']:.3f} | {r['compute_seconds']:.2f} | {r['comm_seconds']:.3f} | "
                         f"{r['efficiency']:.2f} | {r['core_efficiency']:.2f} |")
        lines.append("")
    worlds = [2**k for k in range(13)]
    lines += ["## Model: weak-scaling efficiency on machines we do not have", "",
              f"Compute per step t_c = {compute * 1e3:.2f} ms, gradients G = {grad_bytes / 2**20:.2f} MiB "
              f"({math.ceil(grad_bytes / BUCKET_BYTES)} bucket(s) of 25 MiB); see the header of "
              "`bench/scaling_report.py` for the formula and parameters.", "",
              "| GPUs | " + " | ".join(f"{name}, overlap {o}" for name in MACHINES for o in ("off", "on")) + " |",
              "|---:|" + "---:|" * (2 * len(MACHINES))]
    for w in worlds:
        cells = [f"{compute / step_seconds(w, compute, grad_bytes, m, o):.3f}" for m in MACHINES.values()
                 for o in (False, True)]
        lines.append(f"| {w} | " + " | ".join(cells) + " |")
    open(os.path.join(out, "results.md"), "w").write("\n".join(lines) + "\n")
    print(f"scaling: {out}/results.md")

    try:
        import matplotlib
    except ImportError:
        print("scaling: no matplotlib in this python3, so no scaling.png (apt-get install python3-matplotlib)")
        return
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, (left, right) = plt.subplots(1, 2, figsize=(12, 4.5))
    for mode, marker in (("weak", "o"), ("strong", "s")):
        pts = [r for r in rows if r["mode"] == mode]
        left.plot([r["world_size"] for r in pts], [r["samples_per_s"] for r in pts], marker=marker, label=f"{mode} (measured)")
        right.plot([r["world_size"] for r in pts], [r["core_efficiency"] for r in pts], marker=marker,
                   linestyle="none", markersize=8, label=f"{mode} (measured, per core)")
    for (name, m), color in zip(MACHINES.items(), ("tab:green", "tab:red")):
        for overlap, style in ((False, "--"), (True, "-")):
            right.plot(worlds, [compute / step_seconds(w, compute, grad_bytes, m, overlap) for w in worlds], style,
                       color=color, label=f"model: {name.split(' (')[0]}, overlap {'on' if overlap else 'off'}")
    left.set(xscale="log", xlabel="ranks", ylabel="samples/s (all ranks)", title="Throughput (measured)")
    left.set_xscale("log", base=2)
    right.set_xscale("log", base=2)
    right.set(xlabel="ranks / GPUs", ylabel="efficiency", ylim=(0, 1.1),
              title=f"Efficiency (t_c {compute * 1e3:.1f} ms, G {grad_bytes / 2**20:.1f} MiB)")
    for ax in (left, right):
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(os.path.join(out, "scaling.png"), dpi=110)
    print(f"scaling: {out}/scaling.png")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("action", choices=["collect", "render"])
    parser.add_argument("dir")
    parser.add_argument("--compute-ms", type=float, help="compute time of one step (default: measured at 1 rank)")
    parser.add_argument("--grad-mb", type=float, help="gradient MiB (default: the model's parameters x 4 bytes)")
    args = parser.parse_args()
    if args.action == "collect":
        collect(args.dir)
    else:
        render(args.dir, args.compute_ms, args.grad_mb)


if __name__ == "__main__":
    main()
