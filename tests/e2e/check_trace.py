"""Checks a run's timeline trace (output.trace.steps) with Python's own JSON reader, independently
of the C++ code that wrote and summarised it.

    check_trace.py RUN_DIR FIRST LAST BUCKETS PARAMETERS SUMMARY_JSON

FIRST..LAST: the traced global steps; BUCKETS and PARAMETERS: what the run's log says (gradients
in N bucket(s); N parameters, float32). SUMMARY_JSON: `clustertrain trace summary --json`.
"""
import collections
import glob
import json
import os
import statistics
import sys

STEP_PHASES = ("batch", "forward", "backward", "gradient wait", "optimizer")


def fail(message):
    sys.exit(f"FAIL: {message}")


def spans_by_track(events):
    """Complete events per (pid, tid), in time order."""
    tracks = collections.defaultdict(list)
    for e in events:
        if e["ph"] == "X":
            tracks[(e["pid"], e["tid"])].append(e)
    for spans in tracks.values():
        spans.sort(key=lambda e: (e["ts"], -e["dur"]))
    return tracks


def check_nesting(tracks):
    """On one thread, spans nest: each starts after and ends before the span open around it."""
    for track, spans in tracks.items():
        open_ends = []
        for s in spans:
            while open_ends and s["ts"] >= open_ends[-1] - 1e-3:
                open_ends.pop()
            end = s["ts"] + s["dur"]
            if open_ends and end > open_ends[-1] + 1e-3:
                fail(f"span {s['name']} at {s['ts']} us on {track} ends at {end}, after its parent ({open_ends[-1]})")
            open_ends.append(end)


def inside(child, parent):
    return parent["ts"] - 1e-3 <= child["ts"] and child["ts"] + child["dur"] <= parent["ts"] + parent["dur"] + 1e-3


def check_rank(trace, first, last, buckets, parameters):
    events = trace["traceEvents"]
    rank = trace["otherData"]["rank"]
    tracks = spans_by_track(events)
    check_nesting(tracks)
    names = {(e["pid"], e["tid"]): e["args"]["name"] for e in events if e["name"] == "thread_name"}
    training = [t for t, n in names.items() if n == "training"]
    if len(training) != 1:
        fail(f"rank {rank}: threads {names}")
    spans = tracks[training[0]]
    steps = [s for s in spans if s["name"] == "step"]
    if [s["args"]["step"] for s in steps] != list(range(first, last + 1)):
        fail(f"rank {rank}: traced steps {[s['args']['step'] for s in steps]}, expected {first}..{last}")
    for step in steps:
        for phase in STEP_PHASES:
            held = [s for s in spans if s["name"] == phase and inside(s, step)]
            if len(held) != 1:
                fail(f"rank {rank} step {step['args']['step']}: {len(held)} '{phase}' spans inside it")
    # Each step's buckets: as many as the log says, all the gradients' bytes, launched in the step.
    intervals = collections.defaultdict(dict)
    for e in events:
        if e["ph"] in "be" and e["name"] == "bucket in flight":
            intervals[e["id"]].setdefault(e["ph"], []).append(e)
    flights = []
    for by_phase in intervals.values():
        if len(by_phase.get("b", [])) != len(by_phase.get("e", [])):
            fail(f"rank {rank}: unmatched bucket intervals {by_phase}")
        flights += [(b, e) for b, e in zip(by_phase["b"], by_phase["e"])]
    for step in steps:
        mine = [(b, e) for b, e in flights if step["ts"] <= b["ts"] <= step["ts"] + step["dur"]]
        if len(mine) != buckets:
            fail(f"rank {rank} step {step['args']['step']}: {len(mine)} buckets in flight, the log says {buckets}")
        if sum(b["args"]["bytes"] for b, _ in mine) != 4 * parameters:
            fail(f"rank {rank}: bucket bytes {[b['args']['bytes'] for b, _ in mine]}, {parameters} float32 parameters")
        if any(e["ts"] < b["ts"] or e["ts"] > step["ts"] + step["dur"] + 1e-3 for b, e in mine):
            fail(f"rank {rank}: a bucket ends before its launch or after its step")
    if trace["otherData"]["bucket_bytes"] and sum(trace["otherData"]["bucket_bytes"]) != 4 * parameters:
        fail(f"rank {rank}: otherData bucket_bytes {trace['otherData']['bucket_bytes']}")
    # Bytes in flight: never negative, back to 0 at the end of every step.
    level = [e["args"]["bytes"] for e in sorted((e for e in events if e["ph"] == "C"), key=lambda e: e["ts"])]
    if not level or min(level) < 0 or level[-1] != 0:
        fail(f"rank {rank}: bytes in flight {level[:12]}...")
    # The MPI communication thread's all-reduces and the block reader's reads, on their own threads.
    for thread, span in (("MPI communication", "all-reduce"), ("block reader", "read")):
        ids = [t for t, n in names.items() if n == thread]
        if not ids or not any(s["name"] == span for s in tracks[ids[0]]):
            fail(f"rank {rank}: no '{span}' spans on a '{thread}' thread ({names})")
    return tracks


def main():
    run, first, last, buckets, parameters, summary_path = sys.argv[1:]
    first, last, buckets, parameters = int(first), int(last), int(buckets), int(parameters)
    files = sorted(glob.glob(os.path.join(run, "trace", "rank-*.json")))
    if len(files) != 2:
        fail(f"trace files {files}")
    durations = collections.defaultdict(list)  # phase -> ms, over ranks
    per_rank = collections.defaultdict(lambda: collections.defaultdict(list))
    epoch_phases = set()
    for path in files:
        with open(path) as f:
            trace = json.load(f)
        rank = trace["otherData"]["rank"]
        clock = trace["otherData"]["clock"]
        if "MPI barrier" not in clock["zero"] or abs(clock["wall_clock_offset_from_rank0_us"]) > 60e6:
            fail(f"rank {rank}: clock {clock}")
        tracks = check_rank(trace, first, last, buckets, parameters)
        for spans in tracks.values():
            for s in spans:
                durations[s["name"]].append(s["dur"] / 1e3)
                per_rank[s["name"]][rank].append(s["dur"] / 1e3)
                epoch_phases.add(s["name"])
        begun = {}
        for e in sorted((e for e in trace["traceEvents"] if e["ph"] in "be"), key=lambda e: e["ts"]):
            if e["ph"] == "b":
                begun[e["id"]] = e["ts"]
            else:
                ms = (e["ts"] - begun.pop(e["id"])) / 1e3
                durations[e["name"]].append(ms)
                per_rank[e["name"]][rank].append(ms)
    for phase in ("validation", "checkpoint", "epoch end"):
        if phase not in epoch_phases:
            fail(f"no '{phase}' span, though an epoch ended inside the window")
    # The summary agrees with the spans.
    with open(summary_path) as f:
        summary = {row["phase"]: row for row in json.load(f)}
    if set(summary) != set(durations):
        fail(f"summary phases {sorted(summary)}, spans {sorted(durations)}")
    for phase, values in durations.items():
        row = summary[phase]
        slowest = max(per_rank[phase], key=lambda r: statistics.mean(per_rank[phase][r]))
        checks = {"spans": len(values), "mean_ms": statistics.mean(values), "max_ms": max(values),
                  "p50_ms": sorted(values)[max(1, -(-len(values) * 50 // 100)) - 1], "slowest_rank": slowest}
        for key, expected in checks.items():
            if abs(row[key] - expected) > 2e-6 + 1e-6 * abs(expected):
                fail(f"summary {phase} {key} = {row[key]}, the spans give {expected}")
    # The merged file: every rank's events, each rank a process.
    with open(os.path.join(run, "trace", "merged.json")) as f:
        merged = json.load(f)
    counts = collections.Counter(e["pid"] for e in merged["traceEvents"])
    for path in files:
        with open(path) as f:
            trace = json.load(f)
        rank = trace["otherData"]["rank"]
        if counts[rank] != len(trace["traceEvents"]):
            fail(f"merged.json holds {counts[rank]} events of rank {rank}, its file {len(trace['traceEvents'])}")
    print(f"ok: {len(files)} ranks, steps {first}-{last}, {buckets} buckets per step, "
          f"{sum(len(v) for v in durations.values())} spans; summary agrees")


if __name__ == "__main__":
    main()
