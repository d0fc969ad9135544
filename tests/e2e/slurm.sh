# The shipped sbatch script on a real (local, single-node) Slurm: munged, slurmctld and slurmd
# started here by tests/slurm/local_slurm.sh. 1) `sbatch --wait` of slurm/single_node.sbatch on
# 2 tasks completes and writes its metrics; 2) scancel --signal=USR1 mid-run makes the trainer
# checkpoint and exit 75, train_step.sh requeues the job, and the restarted job resumes and
# finishes with every epoch (before it, a 2-task job array runs slurm/sweep.sbatch, one run
# directory per task); 3) slurm/scaling.sbatch runs the scaling study at 1 and 2 ranks as srun
# steps. Skipped, with the reason, where the daemons cannot start.
source "$(dirname "$0")/common.sh"
SLURM_DIR="$WORK/slurm"
tests/slurm/local_slurm.sh start "$SLURM_DIR" || exit $?
trap 'tests/slurm/local_slurm.sh stop "$SLURM_DIR"; rm -rf "$WORK"' EXIT
export SLURM_CONF="$SLURM_DIR/slurm.conf"
tiny_data "$WORK" 4096
export CT_CONFIG=configs/tiny.yaml CT_BIN="$BIN"
# CPU tasks on this node: the GPU request of the script is overridden on the command line.
SB=(sbatch --gpus-per-node=0 --ntasks-per-node=2 --cpus-per-task=1 --time=10)
T=(--set data.train="$WORK/train.h5" --set data.val="$WORK/val.h5")
job_field() { scontrol show job "$1" | grep -o "$2=[^ ]*" | head -1 | cut -d= -f2; }

# 1. A job that runs to the end.
timeout 300 "${SB[@]}" --wait -o "$WORK/first.out" slurm/single_node.sbatch "${T[@]}" \
  --set output.dir="$WORK/first" --set train.epochs=3 >"$WORK/submit.txt" \
  || { cat "$WORK/first.out" "$WORK/submit.txt"; fail "sbatch --wait failed"; }
job=$(grep -o "[0-9]*$" "$WORK/submit.txt")
[[ "$(job_field "$job" JobState)" == "COMPLETED" ]] || { cat "$WORK/first.out"; fail "job $job: $(job_field "$job" JobState)"; }
grep -q "rank 1/2" "$WORK/first.out" || { cat "$WORK/first.out"; fail "the job did not run 2 ranks in one MPI world"; }
[[ $(wc -l <"$WORK/first/metrics.jsonl") -eq 3 ]] || fail "metrics.jsonl lacks epochs"
echo "ok: sbatch --wait slurm/single_node.sbatch: job $job COMPLETED with 2 ranks, 3 epochs"

# The multi-node script runs the same step; here on this one node.
timeout 300 "${SB[@]}" --nodes=1 --wait -o "$WORK/multi.out" slurm/multi_node.sbatch "${T[@]}" \
  --set output.dir="$WORK/multi" --set train.epochs=2 >/dev/null || { cat "$WORK/multi.out"; fail "multi_node.sbatch failed"; }
[[ $(wc -l <"$WORK/multi/metrics.jsonl") -eq 2 ]] || { cat "$WORK/multi.out"; fail "multi_node.sbatch: no metrics"; }
echo "ok: sbatch --nodes=1 slurm/multi_node.sbatch completed"

# A sweep as a 2-task job array: each task takes its line of the sweep file and writes its own
# run directory through output.dir's {job} and {array_task} placeholders.
printf '# two settings\n--set train.epochs=1\n\n--set train.epochs=2 --set train.lr=0.002\n' >"$WORK/sweep.txt"
CT_SWEEP="$WORK/sweep.txt" timeout 300 "${SB[@]}" --array=0-1 --wait -o "$WORK/sweep-%a.out" slurm/sweep.sbatch "${T[@]}" \
  --set "output.dir=$WORK/sweep-{job}/task-{array_task}" >"$WORK/submit.txt" || { cat "$WORK"/sweep-*.out; fail "sweep failed"; }
array=$(grep -o "[0-9]*$" "$WORK/submit.txt")
[[ $(wc -l <"$WORK/sweep-$array/task-0/metrics.jsonl") -eq 1 && $(wc -l <"$WORK/sweep-$array/task-1/metrics.jsonl") -eq 2 ]] \
  || { cat "$WORK"/sweep-*.out; ls -R "$WORK" | head -40; fail "the sweep's tasks did not each train their own line"; }
grep -q "lr: 0.002" "$WORK/sweep-$array/task-1/config.yaml" || fail "task 1's config.yaml lacks its settings"
grep -q "dir: $WORK/sweep-$array/task-1" "$WORK/sweep-$array/task-1/config.yaml" || fail "config.yaml lacks the expanded dir"
echo "ok: sbatch --array=0-1 slurm/sweep.sbatch: one run directory per task (sweep-$array/task-0, task-1), each its line"

# 2. Preempted mid-run, requeued, resumed. The job holds at global step 150 (epoch 3 of 64
# steps) until the signal comes (CT_TEST_HOLD_AT_STEP, exported to the job by sbatch), so the
# signal lands mid-epoch on a fast machine and on a loaded one; resumed at that step, the
# requeued job does not hold again.
HOLD=150
job=$(CT_TEST_HOLD_AT_STEP=$HOLD "${SB[@]}" --parsable -o "$WORK/second.out" slurm/single_node.sbatch "${T[@]}" \
  --set output.dir="$WORK/second" --set train.epochs=5 --set output.checkpoint_every=0)
deadline=$(( SECONDS + 300 ))
until grep -q "held at global step $HOLD" "$WORK/second.out" 2>/dev/null; do
  state=$(job_field "$job" JobState)
  [[ "$state" == "PENDING" || "$state" == "RUNNING" ]] || { cat "$WORK/second.out"; fail "job $job ended $state before step $HOLD"; }
  (( SECONDS < deadline )) || { cat "$WORK/second.out"; fail "job $job did not reach step $HOLD in 300 s"; }
  sleep 0.2
done
scancel --signal=USR1 "$job"
released=""
deadline=$(( SECONDS + 600 ))
while (( SECONDS < deadline )); do
  state=$(job_field "$job" JobState)
  [[ "$state" == "COMPLETED" || "$state" == "FAILED" || "$state" == "CANCELLED" ]] && break
  # Slurm holds a requeued job for about 2 minutes (Reason=BeginTime); the test does not wait.
  if [[ "$state" == "PENDING" && -z "$released" && "$(job_field "$job" Restarts)" -ge 1 ]]; then
    scontrol update JobId="$job" StartTime=now && released=yes
  fi
  sleep 0.2
done
cat "$WORK/second.out" | grep -E "train_step|preempted|resumed from" || true
[[ "$state" == "COMPLETED" ]] || { cat "$WORK/second.out"; fail "job $job ended $state"; }
[[ "$(job_field "$job" Restarts)" -ge 1 ]] || fail "job $job was not requeued"
grep -q "resumed from .*step-" "$WORK/second.out" || fail "the restarted job did not resume mid-epoch"
[[ $(wc -l <"$WORK/second/metrics.jsonl") -eq 5 ]] || fail "expected 5 epochs in metrics.jsonl"
echo "ok: scancel --signal=USR1 at step $HOLD: checkpoint, exit 75, requeue, resumed mid-epoch, 5 epochs"

# 3. The scaling study as a batch job: srun steps of 1 and 2 ranks.
timeout 300 "${SB[@]}" --nodes=1 --wait -o "$WORK/scaling.out" slurm/scaling.sbatch --max-ranks 2 --epochs 2 \
  --out "$WORK/study" -- "${T[@]}" >/dev/null || { cat "$WORK/scaling.out"; fail "slurm/scaling.sbatch failed"; }
grep -q "^weak,2," "$WORK/study/results.csv" || { cat "$WORK/scaling.out"; fail "no 2-rank row from the Slurm study"; }
echo "ok: slurm/scaling.sbatch: $(( $(grep -c "" "$WORK/study/results.csv") - 1 )) runs under srun"
