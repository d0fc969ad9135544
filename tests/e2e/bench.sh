# The benchmark tools run and say what they measured: `bench step` (the compute-only bound) and
# `bench allreduce` at 1 and 2 ranks, `bench io` at 2 ranks with a seed-layout file, and the Python DDP peer (bench/peer/ddp_vae.py) at 2 ranks
# with a DataLoader worker, plus its compute-only mode. Timings are printed, never asserted.
source "$(dirname "$0")/common.sh"
need_python
tiny_data "$WORK" 2048
C=(--config configs/tiny.yaml --set data.train="$WORK/train.h5" --set data.val="$WORK/val.h5")
for ranks in 1 2; do
  line=$("$MPIEXEC" -n "$ranks" "$BIN" bench step "${C[@]}" --steps 10 --warmup 2 2>/dev/null | tail -1)
  "$PY" -c "import json, sys; r = json.loads(sys.argv[1]); assert r['compute_only_samples_per_s'] > 0 and r['ranks'] == $ranks and r['batch'] == 32, r" "$line" \
    || fail "bench step at $ranks rank(s): $line"
done
# bench step measures the configured model and precision, not a fixed one.
line=$("$BIN" bench step "${C[@]}" --set model.kind=vae_conv1d --set train.precision=bf16 --steps 3 --warmup 1 2>/dev/null | tail -1)
"$PY" -c "import json, sys; r = json.loads(sys.argv[1]); assert r['model'] == 'vae_conv1d' and r['precision'] == 'bf16' and r['compute_only_samples_per_s'] > 0, r" "$line" \
  || fail "bench step with model.kind=vae_conv1d, train.precision=bf16: $line"
"$MPIEXEC" -n 2 "$BIN" bench allreduce "${C[@]}" --length 256 --iterations 3 >"$WORK/allreduce.txt" 2>&1 \
  || { cat "$WORK/allreduce.txt"; fail "bench allreduce failed"; }
for row in "one raw all-reduce of all bytes" "bucketed, 25 MiB buckets" "one all-reduce per parameter" \
           "all-reduce during backward (overlap on)"; do
  grep -q "| $row" "$WORK/allreduce.txt" || { cat "$WORK/allreduce.txt"; fail "bench allreduce lacks '$row'"; }
done
"$PY" bench/make_seed_layout.py "$WORK/train.h5" "$WORK/seed.h5" --rows 2048
"$MPIEXEC" -n 2 "$BIN" bench io "$WORK/train.h5" --seed "$WORK/seed.h5" --repeats 1 >"$WORK/io.txt" 2>&1 \
  || { cat "$WORK/io.txt"; fail "bench io failed"; }
for row in "page cache, reused buffer" "page cache, into new memory" "static (MPI-IO, collective)" \
           "blocks (reader thread)" "seed layout (per sample)"; do
  grep -qF "| $row" "$WORK/io.txt" || { cat "$WORK/io.txt"; fail "bench io lacks '$row'"; }
done
PEER=(bench/peer/ddp_vae.py --data "$WORK/train.h5" --length 256 --hidden 128 64 --latent 8 --batch 32 --threads 1)
line=$(MASTER_PORT=$(( 29500 + RANDOM % 2000 )) "$MPIEXEC" -n 2 "$PY" "${PEER[@]}" --epochs 1 --workers 1 2>/dev/null | tail -1)
"$PY" -c "import json, sys; r = json.loads(sys.argv[1]); assert r['steps'] == 2048 // (2 * 32) and r['world_size'] == 2 and r['samples_per_s'] > 0, r" "$line" \
  || fail "the DDP peer: $line"
line=$("$PY" "${PEER[@]}" --compute-only --steps 5 --warmup 1 | tail -1)
"$PY" -c "import json, sys; assert json.loads(sys.argv[1])['compute_only_samples_per_s'] > 0" "$line" || fail "peer compute-only: $line"
# The strong peer with clustertrain's convolutional VAE (run.sh's vae_conv1d rows), and the
# step's matrix products alone (run.sh's limit).
line=$(MASTER_PORT=$(( 29500 + RANDOM % 2000 )) "$MPIEXEC" -n 2 "$PY" bench/peer/ddp_strong.py --data "$WORK/train.h5" \
  --length 256 --latent 8 --batch 32 --threads 1 --epochs 1 --model vae_conv1d --channels 4 8 2>/dev/null | tail -1)
"$PY" -c "import json, sys; r = json.loads(sys.argv[1]); assert r['model'] == 'vae_conv1d' and r['steps'] == 2048 // (2 * 32) and r['samples_per_s'] > 0, r" "$line" \
  || fail "the strong peer with vae_conv1d: $line"
line=$("$PY" bench/sgemm.py --threads 1 --batch 8 --length 64 --hidden 32 --latent 4 | tail -1)
# 2 x 8 x (forward 64x32 + 32x8 + 4x32 + 32x64, weight gradients the same, input gradients all but the first)
"$PY" -c "import json, sys; r = json.loads(sys.argv[1]); assert abs(r['products_gflop'] * 1e9 - 2 * 8 * (3 * (2048 + 256 + 128 + 2048) - 2048)) < 1 and r['products_ms'] > 0, r" "$line" \
  || fail "bench/sgemm.py: $line"
echo "ok: bench step, bench allreduce, bench io, the DDP peers and sgemm.py ran"
