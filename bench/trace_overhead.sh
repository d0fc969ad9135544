#!/usr/bin/env bash
# What the timeline trace costs, as a table in bench/results/trace_overhead.md: the demo
# (configs/gw_vae.yaml, 64 steps an epoch at 2 ranks, 128 at 1) trained 4 epochs with
# output.trace.steps covering every step, and without a trace, on 1 and 2 ranks. Interleaved
# (off, on, off, on, ...), REPEATS rounds (default 5); each run's median samples/s over epochs 2-4;
# the table gives the medians over rounds and the median of the rounds' on/off ratios.
#   bench/trace_overhead.sh [REPEATS]        (CT_BIN: the binary, default build/clustertrain)
set -euo pipefail
cd "$(dirname "$0")/.."
REPEATS=${1:-5}
BIN=${CT_BIN:-build/clustertrain}
source bench/common.sh
OUT=bench/results/trace_overhead.md
for round in $(seq "$REPEATS"); do
  for ranks in 1 2; do
    for mode in off on; do
      echo "bench: round $round/$REPEATS, $ranks rank(s), trace $mode" >&2
      dir="$WORK/run-$ranks-$mode-$round"
      trace=()
      [[ $mode == on ]] && trace=(--set "output.trace.steps=[1, 512]")
      mpirun -n "$ranks" $(mpi_flags_for "$ranks") "$BIN" train --config configs/gw_vae.yaml --set train.epochs=4 \
        --set output.dir="$dir" --set output.checkpoint_every=0 --set output.log_every=0 "${trace[@]}" >"$dir.txt" 2>&1 ||
        { cat "$dir.txt"; exit 1; }
    done
  done
done
/usr/bin/python3 - "$WORK" "$REPEATS" >"$OUT" <<'PYEOF'
import glob, json, os, platform, statistics, sys
work, repeats = sys.argv[1], int(sys.argv[2])
cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), platform.processor())
def rate(ranks, mode, r):
    rows = [json.loads(l) for l in open(f"{work}/run-{ranks}-{mode}-{r}/metrics.jsonl")]
    return statistics.median(row["samples_per_s"] for row in rows[1:])
def events(ranks, r):
    return sum(len(json.load(open(p))["traceEvents"]) for p in glob.glob(f"{work}/run-{ranks}-on-{r}/trace/rank-*.json"))
print("# What the timeline trace costs\n")
print(f"Machine: {os.cpu_count()} cores ({cpu}); `bench/trace_overhead.sh {repeats}`.")
print("The demo (`configs/gw_vae.yaml`), 4 epochs, without a trace and with `output.trace.steps=[1, 512]` (every step")
print(f"traced); runs interleaved over {repeats} rounds. Each run's median samples/s over epochs 2-4; medians over rounds.\n")
print("| ranks | trace off, samples/s | trace on, samples/s | on / off (median of rounds) | events traced per run |")
print("|---:|---:|---:|---:|---:|")
for ranks in (1, 2):
    off = [rate(ranks, "off", r) for r in range(1, repeats + 1)]
    on = [rate(ranks, "on", r) for r in range(1, repeats + 1)]
    ratio = statistics.median(b / a for a, b in zip(off, on))
    print(f"| {ranks} | {statistics.median(off):,.0f} | {statistics.median(on):,.0f} | {ratio:.3f} | "
          f"{statistics.median(events(ranks, r) for r in range(1, repeats + 1)):,.0f} |")
PYEOF
cat "$OUT"
