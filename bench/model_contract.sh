#!/usr/bin/env bash
# The "any model" contract's cost, as a table in bench/results/model_contract.md: the compute-only
# training step (`clustertrain bench step`, 1 rank, the demo's data and batch) of the demo VAE as
#   the built-in vae_mlp,
#   a TorchScript module with forward(x) -> (recon, mu, logvar) (clustertrain computes the loss),
#   the same network as a TorchScript module with forward(batch) -> dict (the module computes the
#   loss and its metrics),
# and, with CT_BASELINE_BIN=path/to/clustertrain, the built-in vae_mlp of another build (an
# earlier commit) beside them. Interleaved, REPEATS rounds (default 7); medians.
#   bench/model_contract.sh [REPEATS]
set -euo pipefail
cd "$(dirname "$0")/.."
REPEATS=${1:-7}
source bench/common.sh
OUT=bench/results/model_contract.md
/usr/bin/python3 bench/contract_models.py "$WORK"
VARIANTS=("built-in vae_mlp|build/clustertrain|"
  "TorchScript, forward(x) -> tuple|build/clustertrain|--set model.kind=torchscript --set model.path=$WORK/tuple.pt"
  "TorchScript, forward(batch) -> dict|build/clustertrain|--set model.kind=torchscript --set model.path=$WORK/dict.pt")
[[ -n "${CT_BASELINE_BIN:-}" ]] && VARIANTS=("built-in vae_mlp, baseline build|$CT_BASELINE_BIN|" "${VARIANTS[@]}")
for round in $(seq "$REPEATS"); do
  for v in "${!VARIANTS[@]}"; do
    IFS='|' read -r name bin flags <<<"${VARIANTS[$v]}"
    echo "bench: round $round/$REPEATS, $name" >&2
    # shellcheck disable=SC2086
    mpirun -n 1 $(mpi_flags_for 1) "$bin" bench step --config configs/gw_vae.yaml $flags --steps 200 --warmup 20 \
      2>/dev/null | grep -o '"compute_only_samples_per_s": [0-9.]*' | cut -d' ' -f2 >>"$WORK/v$v"
  done
done
{
  echo "# The model contract's cost"
  echo
  echo "Machine: $(nproc) cores ($(lscpu | sed -n 's/^Model name: *//p')), LibTorch $(grep -m1 -o 'CT_LIBTORCH_VERSION=[^ ]*' build/build.ninja | tr -dc '0-9.'); $(date -u +%F)."
  echo "\`clustertrain bench step --config configs/gw_vae.yaml --steps 200 --warmup 20\` on 1 rank (batch 128 of rows of 1024),"
  echo "$REPEATS rounds, the variants interleaved; samples/s of the compute-only step (forward, backward, Adam), median over rounds."
  [[ -z "${CT_BASELINE_BIN:-}" ]] || echo "Baseline build: ${CT_BASELINE_DESC:-$CT_BASELINE_BIN}."
  echo
  echo "| model | samples/s (median) | min - max | vs built-in vae_mlp |"
  echo "|---|---:|---:|---:|"
  base=$(median <"$WORK/v$((${#VARIANTS[@]} - 3))")
  for v in "${!VARIANTS[@]}"; do
    IFS='|' read -r name _ _ <<<"${VARIANTS[$v]}"
    m=$(median <"$WORK/v$v")
    printf '| %s | %.0f | %.0f - %.0f | %.3f |\n' "$name" "$m" "$(sort -g "$WORK/v$v" | head -1)" \
      "$(sort -g "$WORK/v$v" | tail -1)" "$(awk -v a="$m" -v b="$base" 'BEGIN {print a / b}')"
  done
} | tee "$OUT"
