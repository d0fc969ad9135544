# Long runs stay flat: 200 short epochs on 2 ranks (checkpoints every 10) and the largest
# resident memory of any rank, recorded per epoch in metrics.jsonl, grows by less than 5% from
# epoch 20 (after the allocators have warmed up) to epoch 200.
source "$(dirname "$0")/common.sh"
tiny_data "$WORK" 512
"$MPIEXEC" -n 2 "$BIN" train --config configs/tiny.yaml --set data.train="$WORK/train.h5" \
  --set data.val="$WORK/val.h5" --set output.dir="$WORK/run" --set train.epochs=200 \
  --set output.checkpoint_every=10 --set output.log_every=0 --set train.plateau.patience=1000 >/dev/null
rss() { sed -n "${1}p" "$WORK/run/metrics.jsonl" | grep -o '"max_rss_mb":[0-9.]*' | cut -d: -f2; }
early=$(rss 20)
late=$(rss 200)
[[ -n "$early" && -n "$late" ]] || fail "metrics.jsonl lacks max_rss_mb for epochs 20 and 200"
awk -v a="$early" -v b="$late" 'BEGIN { exit !(b < a * 1.05) }' \
  || fail "resident memory grew from $early MiB (epoch 20) to $late MiB (epoch 200)"
echo "ok: resident memory $early MiB at epoch 20, $late MiB at epoch 200"
