# The scaling study end to end under mpirun at 1 and 2 ranks: the sweep runs, results.csv and
# results.json hold one row per (mode, world size) with every column, the Markdown table and the
# model are written, and the PNG where matplotlib exists.
source "$(dirname "$0")/common.sh"
tiny_data "$WORK" 2048
bench/scaling.sh --max-ranks 2 --epochs 2 --config configs/tiny.yaml --out "$WORK/study" \
  -- --set data.train="$WORK/train.h5" --set data.val="$WORK/val.h5" >"$WORK/log.txt" 2>&1 \
  || { cat "$WORK/log.txt"; fail "bench/scaling.sh failed"; }
check_study() {  # check_study DIR: 4 rows, the header, the report
  [[ "$(head -1 "$1/results.csv")" == "mode,world_size,threads_per_rank,batch_per_rank,global_batch,lr,samples_per_s,epoch_seconds,data_seconds,compute_seconds,comm_seconds,steps_per_epoch,compute_ms_per_step,efficiency,core_efficiency,parameters" ]] \
    || fail "results.csv header: $(head -1 "$1/results.csv")"
  [[ $(grep -c "" "$1/results.csv") -eq 5 ]] || fail "expected 4 runs in results.csv"
  # tiny.yaml: 32 rows per rank. Weak keeps 32 per rank; strong keeps the global batch of the
  # largest world (2 x 32), so 1 rank takes all 64.
  grep -q "^weak,1,[0-9]*,32,32," "$1/results.csv" || fail "weak scaling at 1 rank: not 32 per rank"
  grep -q "^weak,2,[0-9]*,32,64," "$1/results.csv" || fail "weak scaling at 2 ranks: not 32 per rank"
  grep -q "^strong,1,[0-9]*,64,64," "$1/results.csv" || fail "strong scaling at 1 rank: not the global 64"
  grep -q "^strong,2,[0-9]*,32,64," "$1/results.csv" || fail "strong scaling at 2 ranks: not 32 of a global 64"
  grep -q "| 4096 |" "$1/results.md" || fail "the model's table does not reach 4096 GPUs"
}
check_study "$WORK/study"
if /usr/bin/python3 -c "import matplotlib" 2>/dev/null || python3 -c "import matplotlib" 2>/dev/null; then
  [[ -s "$WORK/study/scaling.png" ]] || fail "no scaling.png although matplotlib is installed"
fi
echo "ok: scaling study at 1 and 2 ranks: $(grep -c "" "$WORK/study/results.csv") lines in results.csv"
