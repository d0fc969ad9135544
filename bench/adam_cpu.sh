#!/usr/bin/env bash
# Adam's update on the CPU, as a table in bench/results/adam_cpu.md: `clustertrain bench step`
# on the demo (configs/gw_vae.yaml: 1,325,600 parameters, batch 128 of rows of 1024) with each
# of Adam's update kernels -- ATen's five elementwise passes (what training ran before), the one
# pass of train/adam_cpu.h (what it runs now), and LibTorch's fused kernel where the build has one
# (LibTorch >= 2.4; training does not use it on the CPU: it reads its step count back every step)
# -- on 1 rank (the node's cores) and 2 ranks (a core each; the one pass split over them, as
# training runs it, and unsplit). Interleaved, REPEATS rounds (default
# 7); medians of the per-round medians. Both builds where both exist (build/ against Debian's
# LibTorch, build-torch2/ against pip's: launch/test.sh --torch pip), interleaved too.
#   bench/adam_cpu.sh [REPEATS]        (CT_BINS: the binaries, space-separated)
set -euo pipefail
cd "$(dirname "$0")/.."
REPEATS=${1:-7}
source bench/common.sh
OUT=bench/results/adam_cpu.md
if [[ -n "${CT_BINS:-}" ]]; then read -r -a BINS <<<"$CT_BINS"; else
  BINS=(build/clustertrain)
  [[ -x build-torch2/clustertrain ]] && BINS+=(build-torch2/clustertrain)
fi
# Each build's kernels: "fused" where its LibTorch has a fused CPU kernel.
RUNS=()
for bin in "${BINS[@]}"; do
  RUNS+=("$bin passes" "$bin one-pass" "$bin one-pass unsplit")
  [[ "$("$bin" bench step --config configs/gw_vae.yaml --steps 1 --warmup 0 --adam fused 2>/dev/null)" == \
    *"LibTorch's fused kernel"* ]] && RUNS+=("$bin fused")
done
# The memory's limit: a pass with Adam's bytes and no arithmetic (bench/adam_limit.cpp), on the
# same threads per rank, in as many processes at once as ranks; each over all the parameters,
# and at 2 ranks also over half of them each (the split update's limit).
g++ -O3 -fopenmp -march=native bench/adam_limit.cpp -o "$WORK/adam_limit"
PARAMS=1325600
for round in $(seq "$REPEATS"); do
  for ranks in 1 2; do
    mpirun -n "$ranks" $(mpi_flags_for "$ranks") "$WORK/adam_limit" $PARAMS $(( $(nproc) / ranks )) 200 \
      | sort -g | tail -1 >>"$WORK/$ranks-limit"
    [[ $ranks -eq 1 ]] || mpirun -n "$ranks" $(mpi_flags_for "$ranks") "$WORK/adam_limit" $((PARAMS / ranks)) $(( $(nproc) / ranks )) 200 \
      | sort -g | tail -1 >>"$WORK/$ranks-split-limit"
    for i in "${!RUNS[@]}"; do
      read -r bin kernel unsplit <<<"${RUNS[$i]}"
      [[ -n "$unsplit" && $ranks -eq 1 ]] && continue  # one rank has nothing to split
      echo "bench: round $round/$REPEATS, $ranks rank(s), $bin $kernel $unsplit" >&2
      mpirun -n "$ranks" $(mpi_flags_for "$ranks") "$bin" bench step --config configs/gw_vae.yaml --adam "$kernel" \
        ${unsplit:+--set runtime.shard_optimizer=false} --steps 200 --warmup 20 2>/dev/null | grep '^{' >>"$WORK/$ranks-$i.jsonl"
    done
  done
done
/usr/bin/python3 - "$WORK" "$REPEATS" "${RUNS[@]}" >"$OUT" <<'PYEOF'
import json, os, platform, re, statistics, sys
work, repeats, runs = sys.argv[1], int(sys.argv[2]), [r.split() for r in sys.argv[3:]]
cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), platform.processor())
print("# Adam's update on the CPU\n")
print(f"Machine: {os.cpu_count()} cores ({cpu}); `bench/adam_cpu.sh {repeats}`.")
print("`clustertrain bench step --config configs/gw_vae.yaml --adam KERNEL --steps 200 --warmup 20`: the demo VAE")
print("(1,325,600 parameters in one flat buffer), batch 128 per rank; each line the median over "
      f"{repeats} interleaved rounds of each round's median step.\n")
print("Memory-only pass: `bench/adam_limit.cpp`, a pass over four arrays of as many float32 elements that")
print("reads and writes Adam's 28 bytes per element with an add each instead of Adam's arithmetic, on the")
print("same threads, in as many processes at once as ranks (the slowest process; median of 200 passes,")
print("then of the rounds): the memory's rate, below which no Adam can go. Where the node's ranks split the")
print("update (each updates its half, in node-shared memory), the limit is that pass over half the elements")
print("in each process at once.\n")
print("| build | ranks x threads | Adam's kernel | Adam ms | step ms | Adam share of the step | Adam speed-up vs the build's five passes | memory-only pass ms | Adam / memory-only pass |")
print("|---|---|---|---:|---:|---:|---:|---:|---:|")
for ranks in (1, 2):
    ran = [i for i in range(len(runs)) if os.path.exists(f"{work}/{ranks}-{i}.jsonl")]
    rows = {i: [json.loads(l) for l in open(f"{work}/{ranks}-{i}.jsonl")] for i in ran}
    med = {i: (statistics.median(r["optimizer_ms"] for r in v), statistics.median(r["step_ms"] for r in v)) for i, v in rows.items()}
    limits = {name: statistics.median(float(l) for l in open(f"{work}/{ranks}-{name}"))
              for name in ("limit", "split-limit") if os.path.exists(f"{work}/{ranks}-{name}")}
    for i in ran:
        binary, kernel = runs[i][:2]
        ninja = open(os.path.join(os.path.dirname(binary), "build.ninja")).read()
        version = "LibTorch " + re.search(r"CT_LIBTORCH_VERSION=\\?\"?([0-9.]+)", ninja).group(1)
        passes = next(j for j, r in enumerate(runs) if r[0] == binary and r[1] == "passes")
        adam, step = med[i]
        kernel_text = rows[i][0]["optimizer"].split(", ", 1)[1]
        limit = limits["split-limit" if "split over" in kernel_text else "limit"]
        print(f"| {binary} ({version}) | {ranks} x {rows[i][0]['threads']} | {kernel_text} "
              f"| {adam:.2f} | {step:.2f} | {100 * adam / step:.1f}% | {med[passes][0] / adam:.2f}x "
              f"| {limit:.2f} | {adam / limit:.2f} |")
PYEOF
cat "$OUT"
