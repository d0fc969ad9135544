# train.batch_size: auto -- the search chooses a size, trains exactly as a run configured with
# that size (metrics.jsonl and model.pt bit for bit), the lr follows the rule for it, a resume
# keeps it (also on another world size) without searching again, and misuse is refused.
source "$(dirname "$0")/common.sh"
need_python
# The demo: its config and data of its shape (demo_data.sh's seeds and sizes).
"$MPIEXEC" -n 2 "$BIN" make-data --out "$WORK/train.h5" -n 16384 -l 1024 --seed 1 >/dev/null
"$BIN" make-data --out "$WORK/val.h5" -n 2048 -l 1024 --seed 2 >/dev/null
T=(--config configs/gw_vae.yaml --set data.train="$WORK/train.h5" --set data.val="$WORK/val.h5" --set train.epochs=2)
run() {  # run NAME RANKS [train arguments...]
  local name=$1 ranks=$2
  shift 2
  "$MPIEXEC" -n "$ranks" "$BIN" train "${T[@]}" --set output.dir="$WORK/$name" "$@" >"$WORK/$name.txt" 2>&1 ||
    { cat "$WORK/$name.txt"; fail "$name: run failed"; }
}
run auto 2 --set train.batch_size=auto --set train.autotune.max=1024
chosen=$(sed -n 's/.*batch_size auto: chose \([0-9]*\) per rank (.*/\1/p' "$WORK/auto.txt")
[[ -n $chosen ]] || { cat "$WORK/auto.txt"; fail "no choice logged"; }
# The table: one line per size tried, from 16 doubling, none above the max.
sizes=$(awk '/batch_size auto: batch per rank/{f=1; next} f && /^ +[0-9]+ +[0-9]+ +[0-9.]+ MiB$/{print $1; next} {f=0}' "$WORK/auto.txt" | tr '\n' ' ')
[[ $sizes == "16 "* ]] || { cat "$WORK/auto.txt"; fail "table of sizes: '$sizes'"; }
for size in $sizes; do (( size <= 1024 )) || fail "size $size above train.autotune.max=1024"; done
[[ " $sizes" == *" $chosen "* ]] || fail "chose $chosen, not among the sizes measured ($sizes)"
grep -q "^  batch_size: $chosen$" "$WORK/auto/config.yaml" || fail "config.yaml does not record batch_size $chosen"
echo "ok: measured sizes $sizes-> chose $chosen per rank, recorded in config.yaml"

# The same run configured with the chosen size: identical records and weights.
run fixed 2 --set train.batch_size="$chosen"
"$PY" tests/e2e/runs.py same "$WORK/auto" "$WORK/fixed" --weights >/dev/null || fail "auto ($chosen) differs from batch_size=$chosen"
# The lr rule for the chosen global batch: the demo's lr 1e-3 for base_batch 128, linear.
"$PY" - "$WORK/auto" "$chosen" <<'EOF'
import sys, runs
run, chosen = sys.argv[1], int(sys.argv[2])
for r in runs.records(run):
    assert r["global_batch"] == 2 * chosen, r
    assert abs(r["lr"] - 1e-3 * 2 * chosen / 128) <= 1e-12, (r["lr"], chosen)
EOF
echo "ok: the search leaves the run as batch_size=$chosen would (records and model.pt bit for bit); lr by the rule"

# A resume with batch_size auto keeps the choice and does not search; on 1 rank too.
for ranks in 2 1; do
  rc=0
  "$MPIEXEC" -n "$ranks" "$BIN" train "${T[@]}" --set output.dir="$WORK/auto" --set train.batch_size=auto \
    --set train.epochs=$((5 - ranks)) --resume auto >"$WORK/resume$ranks.txt" 2>&1 || rc=$?
  [[ $rc -eq 0 ]] || { cat "$WORK/resume$ranks.txt"; fail "resume on $ranks rank(s): exit $rc"; }
  contains "resuming with the size the run chose, $chosen per rank (not searched again)" <"$WORK/resume$ranks.txt" ||
    { cat "$WORK/resume$ranks.txt"; fail "resume on $ranks rank(s) did not keep $chosen"; }
  ! contains "batch_size auto: batch per rank" <"$WORK/resume$ranks.txt" || fail "a resume searched again"
done
"$PY" - "$WORK/auto" "$chosen" <<'EOF'
import sys, runs
rows = runs.records(sys.argv[1])
assert [r["world_size"] for r in rows] == [2, 2, 2, 1], rows
assert rows[-1]["global_batch"] == int(sys.argv[2]), rows[-1]  # the per-rank batch kept on 1 rank
EOF
echo "ok: resumes on 2 and 1 ranks keep $chosen per rank without a search"

# Misuse, one message each.
rc=0
"$BIN" train "${T[@]}" --set output.dir="$WORK/bad1" --set train.batch_size=auto --set train.autotune.max=8 >"$WORK/bad1.txt" 2>&1 || rc=$?
[[ $rc -eq 2 ]] && contains "give max >= min" <"$WORK/bad1.txt" || { cat "$WORK/bad1.txt"; fail "max < min: exit $rc"; }
rc=0
"$BIN" train "${T[@]}" --set output.dir="$WORK/bad2" --set train.batch_size=auto \
  --set train.autotune.memory_fraction=1e-12 >"$WORK/bad2.txt" 2>&1 || rc=$?
[[ $rc -eq 2 ]] && contains "train.batch_size=auto: not even train.autotune.min=16 fits: batch 16 needs" <"$WORK/bad2.txt" ||
  { cat "$WORK/bad2.txt"; fail "nothing fits: exit $rc"; }
rc=0
"$BIN" bench step "${T[@]}" --set train.batch_size=auto >"$WORK/bad3.txt" 2>&1 || rc=$?
[[ $rc -eq 2 ]] && contains "bench times the batch it is given: train.batch_size is auto" <"$WORK/bad3.txt" ||
  { cat "$WORK/bad3.txt"; fail "bench with auto: exit $rc"; }
echo "ok: max < min, a cap nothing fits under, and bench with auto are refused"
