#!/usr/bin/env bash
# Adam's update on the CPU, as a table in bench/results/adam_cpu.md: `clustertrain bench step`
# on the demo (configs/gw_vae.yaml: 1,325,600 parameters, batch 128 of rows of 1024) with each
# of Adam's update kernels -- ATen's five elementwise passes (what training ran before), the one
# pass of train/adam_cpu.h (what it runs now), and LibTorch's fused kernel where the build has one
# (LibTorch >= 2.4; training does not use it on the CPU: it reads its step count back every step)
# -- on 1 rank (the node's cores) and 2 ranks (a core each). Interleaved, REPEATS rounds (default
# 7); medians of the per-round medians.
#   bench/adam_cpu.sh [REPEATS]        (CT_BIN: the binary, default build/clustertrain)
set -euo pipefail
cd "$(dirname "$0")/.."
REPEATS=${1:-7}
BIN=${CT_BIN:-build/clustertrain}
source bench/common.sh
OUT=bench/results/adam_cpu.md
KERNELS=(passes one-pass)
"$BIN" --version >/dev/null
[[ "$("$BIN" bench step --config configs/gw_vae.yaml --steps 1 --warmup 0 --adam fused 2>/dev/null)" == *"LibTorch's fused kernel"* ]] &&
  KERNELS+=(fused)
for round in $(seq "$REPEATS"); do
  for ranks in 1 2; do
    for kernel in "${KERNELS[@]}"; do
      echo "bench: round $round/$REPEATS, $ranks rank(s), $kernel" >&2
      mpirun -n "$ranks" $(mpi_flags_for "$ranks") "$BIN" bench step --config configs/gw_vae.yaml --adam "$kernel" \
        --steps 200 --warmup 20 2>/dev/null | grep '^{' >>"$WORK/$ranks-$kernel.jsonl"
    done
  done
done
/usr/bin/python3 - "$WORK" "$REPEATS" "$BIN" "${KERNELS[@]}" >"$OUT" <<'PYEOF'
import json, os, platform, statistics, subprocess, sys
work, repeats, binary, kernels = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4:]
cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), platform.processor())
version = subprocess.run([binary, "--version"], capture_output=True, text=True).stdout.strip()
print("# Adam's update on the CPU\n")
print(f"Machine: {os.cpu_count()} cores ({cpu}); {version}; `bench/adam_cpu.sh {repeats}`.")
print("`clustertrain bench step --config configs/gw_vae.yaml --adam KERNEL --steps 200 --warmup 20`: the demo VAE")
print("(1,325,600 parameters in one flat buffer), batch 128 per rank; each line the median over "
      f"{repeats} interleaved rounds of each round's median step.\n")
print("| ranks x threads | Adam's kernel | Adam ms | step ms | Adam share of the step | Adam speed-up vs five passes |")
print("|---|---|---:|---:|---:|---:|")
for ranks in (1, 2):
    rows = {k: [json.loads(l) for l in open(f"{work}/{ranks}-{k}.jsonl")] for k in kernels}
    med = {k: (statistics.median(r["optimizer_ms"] for r in v), statistics.median(r["step_ms"] for r in v))
           for k, v in rows.items()}
    threads = rows[kernels[0]][0]["threads"]
    for k in kernels:
        adam, step = med[k]
        print(f"| {ranks} x {threads} | {rows[k][0]['optimizer'].split(', ', 1)[1]} | {adam:.2f} | {step:.2f} | "
              f"{100 * adam / step:.1f}% | {med['passes'][0] / adam:.2f}x |")
PYEOF
cat "$OUT"
