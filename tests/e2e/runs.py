"""Reading and comparing clustertrain run directories, as a Python user reads them: the one copy
that the tests, peers and benchmarks import (tests/e2e/common.sh puts this folder on PYTHONPATH).

    import runs
    runs.records(run_dir)                 # metrics.jsonl, one dict per epoch
    runs.same_records(a, b)               # the same values, timings aside (AssertionError if not)
    runs.same_weights(a, b)               # model.pt tensors equal bit for bit

From a shell:  python3 tests/e2e/runs.py same RUN_A RUN_B [--epochs N] [--keys k,k] [--weights]
               python3 tests/e2e/runs.py count RUN
"""
import argparse
import json
import os
import sys

# What differs between two runs of the same computation: clocks, speed and memory.
TIMING = {"samples_per_s", "train_seconds", "val_seconds", "epoch_seconds", "data_seconds", "compute_seconds",
          "comm_seconds", "max_rss_mb", "gpu_mem_allocated_mb", "gpu_mem_reserved_mb", "gpu_util_percent"}


def metrics_path(run):
    """A run directory's metrics.jsonl (a path to the file itself is taken as it is)."""
    return run if run.endswith(".jsonl") else os.path.join(run, "metrics.jsonl")


def records(run):
    """The run's epoch records in order, one dict each."""
    with open(metrics_path(run)) as f:
        return [json.loads(line) for line in f if line.strip()]


def last(run):
    """The run's last epoch record."""
    rows = records(run)
    assert rows, f"{metrics_path(run)} has no records"
    return rows[-1]


def same_records(a, b, keys=None, epochs=None):
    """Asserts that runs a and b recorded the same values: `keys`, or every field but TIMING.
    Returns the number of records."""
    ra, rb = records(a), records(b)
    assert len(ra) == len(rb), f"{a}: {len(ra)} records, {b}: {len(rb)}"
    assert epochs is None or len(ra) == epochs, f"{len(ra)} records, expected {epochs}"
    for x, y in zip(ra, rb):
        fields = keys or sorted((set(x) | set(y)) - TIMING)
        differ = [k for k in fields if x.get(k) != y.get(k)]
        assert not differ, f"epoch {x.get('epoch')}: {', '.join(f'{k} {x.get(k)} != {y.get(k)}' for k in differ)}"
    return len(ra)


def weights(run, name="model.pt"):
    import torch  # only where weights are compared: the record readers need no torch
    return torch.load(os.path.join(run, name))


def same_weights(a, b, name="model.pt"):
    """Asserts that runs a and b wrote the same tensors, bit for bit."""
    import torch
    sa, sb = weights(a, name), weights(b, name)
    assert sa.keys() == sb.keys(), f"{name}: tensors {sorted(sa)} != {sorted(sb)}"
    differ = [k for k in sa if not torch.equal(sa[k], sb[k])]
    assert not differ, f"{name}: tensors differ: {differ}"


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    same = sub.add_parser("same", help="two runs recorded the same values (and wrote the same weights)")
    same.add_argument("a")
    same.add_argument("b")
    same.add_argument("--epochs", type=int, help="and each has this many records")
    same.add_argument("--keys", help="compare only these fields (comma-separated)")
    same.add_argument("--weights", action="store_true", help="and model.pt is the same bit for bit")
    count = sub.add_parser("count", help="print how many epochs the run recorded")
    count.add_argument("run")
    args = parser.parse_args()
    if args.command == "count":
        print(len(records(args.run)))
        return 0
    try:
        n = same_records(args.a, args.b, args.keys.split(",") if args.keys else None, args.epochs)
        if args.weights:
            same_weights(args.a, args.b)
    except AssertionError as e:
        print(f"runs differ: {args.a} vs {args.b}: {e}", file=sys.stderr)
        return 1
    print(f"same: {n} records{' and model.pt' if args.weights else ''}: {args.a} = {args.b}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
