#!/usr/bin/env bash
# The data pipeline's benchmarks, as tables in bench/results/io.md:
#   1. `clustertrain bench io` at 1 and 2 ranks on the demo training file (16,384 x 1024 float32
#      rows, 128 MiB) and on the same rows in the seed's one-group-per-sample layout: read
#      throughput of data.sharding static and blocks against the page cache;
#      The same rows stored three other ways, read through the training loaders in the same
#      rounds: split over 8 files (a glob), as float64 (numpy's default), and as a virtual dataset
#      over the 8 files; MB/s of float32 rows delivered, against the one float32 file's;
#   2. demo training throughput on 2 ranks with data.sharding static vs blocks, interleaved,
#      REPEATS runs each, median of epochs 2-3 of each run, then the median over runs: the
#      reader thread must hide reading behind compute.
#   bench/io.sh [REPEATS]          (default 5; about 4 minutes on 2 cores)
set -euo pipefail
cd "$(dirname "$0")/.."
REPEATS=${1:-5}
source bench/common.sh
OUT=bench/results/io.md
/usr/bin/python3 bench/make_seed_layout.py data/gw_train.h5 "$WORK/seed.h5"
# The other forms of the same rows, written as h5py writes them (chunked like the demo file).
/usr/bin/python3 - "$WORK" <<'PYEOF'
import sys, h5py
w = sys.argv[1]
with h5py.File("data/gw_train.h5") as a:
    rows, length = a["input"].shape
    chunk = a["input"].chunks
    part = rows // 8
    for i in range(8):
        with h5py.File(f"{w}/part-{i}.h5", "w") as f:
            for key in ("input", "target"):
                f.create_dataset(key, data=a[key][i * part:(i + 1) * part], chunks=chunk)
    with h5py.File(w + "/f64.h5", "w") as f:
        for key in ("input", "target"):
            f.create_dataset(key, data=a[key][...].astype("f8"), chunks=chunk)
with h5py.File(w + "/vds.h5", "w") as f:
    for key in ("input", "target"):
        layout = h5py.VirtualLayout(shape=(rows, length), dtype="f4")
        for i in range(8):
            layout[i * part:(i + 1) * part] = h5py.VirtualSource(f"part-{i}.h5", key, shape=(part, length))
        f.create_virtual_dataset(key, layout)
PYEOF
FORMS=(--as "8 files=$WORK/part-*.h5" --as "float64=$WORK/f64.h5" --as "VDS of the 8 files=$WORK/vds.h5")

{
  echo "# Data pipeline benchmarks"
  echo
  echo "Machine: $(nproc) cores ($(lscpu | sed -n 's/^Model name: *//p')), $(uname -r); $(date -u +%F)."
  echo "The file is in the page cache (a warm-up read first). *Reused buffer*: pread into one 8 MiB"
  echo "buffer, as \`dd\` does. *Into new memory*: pread into memory that keeps every byte, as any"
  echo "loader that holds the rows must (its first touch of each page costs a page fault)."
  echo "The second table reads the same rows stored other ways through the training loaders"
  echo "(ShardLoader::Load for static, an epoch of the block reader for blocks), in the same rounds:"
  echo "MB/s of float32 rows delivered (float64 reads twice the bytes from the file), against the"
  echo "one float32 file's."
  for ranks in 1 2; do
    echo
    echo "## \`mpirun -n $ranks build/clustertrain bench io data/gw_train.h5 --seed SEED.h5 --as ...\`"
    echo
    mpirun -n "$ranks" $(mpi_flags_for "$ranks") build/clustertrain bench io data/gw_train.h5 --seed "$WORK/seed.h5" \
      "${FORMS[@]}" --repeats 7 2>&1 | grep -E '^\||^bench io|^$'
  done
} >"$OUT"

for run in $(seq "$REPEATS"); do
  for mode in static blocks; do
    echo "bench: training run $run/$REPEATS, data.sharding=$mode" >&2
    dir="$WORK/r$run-$mode"
    mpirun -n 2 $(mpi_flags_for 2) build/clustertrain train --config configs/gw_vae.yaml --set data.sharding=$mode \
      --set output.dir="$dir" --set train.epochs=3 --set output.checkpoint_every=0 --set output.log_every=0 \
      >"$dir.txt" 2>&1
  done
done
# field RUN_DIR NAME: NAME of epochs 2-3, one per line
field() { grep -o "\"$2\":[0-9.e-]*" "$1/metrics.jsonl" | tail -2 | cut -d: -f2; }
{
  echo
  echo "## Demo training on 2 ranks: data.sharding static vs blocks"
  echo
  echo "\`mpirun -n 2 build/clustertrain train --config configs/gw_vae.yaml --set data.sharding=MODE --set train.epochs=3\`,"
  echo "$REPEATS runs each, interleaved; the median over runs of each run's median of epochs 2-3. *Waiting for data*:"
  echo "time in the training loop spent getting the next batch (blocks: waiting for the reader thread)."
  echo
  echo "| data.sharding | samples/s | runs' range | waiting for data | vs static |"
  echo "|---|---:|---:|---:|---:|"
  base=""
  for mode in static blocks; do
    rates=$(for run in $(seq "$REPEATS"); do field "$WORK/r$run-$mode" samples_per_s | median; done | sort -g)
    rate=$(median <<<"$rates")
    wait_share=$(for run in $(seq "$REPEATS"); do
      paste <(field "$WORK/r$run-$mode" data_seconds) <(field "$WORK/r$run-$mode" train_seconds) |
        awk '{print 100 * $1 / $2}' | median
    done | median)
    [[ -n "$base" ]] || base=$rate
    printf "| %s | %.0f | %.0f-%.0f | %.1f%% | %.3f |\n" "$mode" "$rate" "$(head -1 <<<"$rates")" "$(tail -1 <<<"$rates")" \
      "$wait_share" "$(awk -v a="$rate" -v b="$base" 'BEGIN {print a / b}')"
  done
} >>"$OUT"
cat "$OUT"
