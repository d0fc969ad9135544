# The shipped sbatch scripts on a real (local, single-node) Slurm: munged, slurmctld and slurmd
# started here by tests/slurm/local_slurm.sh, cores constrained by cgroup where possible.
# 1) slurm/single_node.sbatch on 2 tasks completes and writes its metrics;
# one task with --cpus-per-task=2 runs on 2 cores with 2 threads; a 2-task job array runs
# slurm/sweep.sbatch, one run directory per task, and its preempted task is requeued alone;
# 2) scancel --signal=USR1 mid-run makes the trainer checkpoint and exit 75, train_step.sh
# requeues the job, and the restarted job resumes and finishes with every epoch;
# 3) slurm/scaling.sbatch runs the scaling study at 1 and 2 ranks as srun steps.
# Skipped, with the reason, where the daemons cannot start.
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
source tests/slurm/jobs.sh

# 1. A job that runs to the end.
sbatch_wait "${SB[@]}" --parsable -o "$WORK/first.out" slurm/single_node.sbatch "${T[@]}" \
  --set output.dir="$WORK/first" --set train.epochs=3 >"$WORK/submit.txt" \
  || { cat "$WORK/first.out" "$WORK/submit.txt"; fail "the job failed"; }
job=$(cat "$WORK/submit.txt")
[[ "$(job_field "$job" JobState)" == "COMPLETED" ]] || { cat "$WORK/first.out"; fail "job $job: $(job_field "$job" JobState)"; }
grep -q "rank 1/2" "$WORK/first.out" || { cat "$WORK/first.out"; fail "the job did not run 2 ranks in one MPI world"; }
[[ $(wc -l <"$WORK/first/metrics.jsonl") -eq 3 ]] || fail "metrics.jsonl lacks epochs"
echo "ok: sbatch slurm/single_node.sbatch: job $job COMPLETED with 2 ranks, 3 epochs"

# The multi-node script runs the same step; here on this one node.
sbatch_wait "${SB[@]}" --nodes=1 --parsable -o "$WORK/multi.out" slurm/multi_node.sbatch "${T[@]}" \
  --set output.dir="$WORK/multi" --set train.epochs=2 >/dev/null || { cat "$WORK/multi.out"; fail "multi_node.sbatch failed"; }
[[ $(wc -l <"$WORK/multi/metrics.jsonl") -eq 2 ]] || { cat "$WORK/multi.out"; fail "multi_node.sbatch: no metrics"; }
echo "ok: sbatch --nodes=1 slurm/multi_node.sbatch completed"

# Cores under Slurm: one task with --cpus-per-task=2, its steps exact (SLURM_EXACT=1, as where
# steps run side by side: a step gets only what it asks for). Under the cgroup core constraint a
# step started without -c gets one core, and the trainer's warning names srun's -c as the fix
# (checked first, so the test cannot pass vacuously); train_step.sh's step gets both: 2 threads.
if [[ "$(cat "$SLURM_DIR/task_plugin")" == task/cgroup* ]]; then
  SLURM_EXACT=1 sbatch_wait "${SB[@]/--ntasks-per-node=2/--ntasks-per-node=1}" --cpus-per-task=2 --parsable -o "$WORK/no-c.out" \
    --wrap "srun --mpi=pmix --cpu-bind=none $BIN train --config configs/tiny.yaml ${T[*]} --set output.dir=$WORK/no-c --set train.epochs=1" \
    >/dev/null || { cat "$WORK/no-c.out"; fail "the job without srun -c failed"; }
  grep -qE "allowed [0-9]+  bound [0-9]+  threads 1 " "$WORK/no-c.out" \
    || { cat "$WORK/no-c.out"; fail "no core constraint: a step without -c was not limited to 1 core"; }
  grep -q "the job asked for --cpus-per-task=2 but this srun step got 1 core.*srun --cpus-per-task=\$SLURM_CPUS_PER_TASK" \
    "$WORK/no-c.out" || { cat "$WORK/no-c.out"; fail "the clamp warning does not name srun's missing -c"; }
  constraint="task/cgroup (a step without -c got 1 core and a warning naming srun -c)"
else
  constraint="task/affinity only: this machine's cgroups are not writable, so a missing -c cannot show here"
fi
SLURM_EXACT=1 sbatch_wait "${SB[@]/--ntasks-per-node=2/--ntasks-per-node=1}" --cpus-per-task=2 --parsable -o "$WORK/cores.out" \
  slurm/single_node.sbatch "${T[@]}" --set output.dir="$WORK/cores" --set train.epochs=1 >/dev/null \
  || { cat "$WORK/cores.out"; fail "the --cpus-per-task=2 job failed"; }
grep -qE "rank 0/1  local 0/1  cpu  allowed [0-9,-]+  bound [0-9,-]+  threads 2 " "$WORK/cores.out" \
  || { cat "$WORK/cores.out"; fail "the rank of a --cpus-per-task=2 job does not run 2 threads"; }
! grep -q "warning" "$WORK/cores.out" || { cat "$WORK/cores.out"; fail "a clamp warning under --cpus-per-task=2"; }
echo "ok: --cpus-per-task=2 under $constraint: the train_step.sh rank runs on 2 cores with 2 threads"

# A sweep as a 2-task job array: each task takes its line of the sweep file and writes its own
# run directory through output.dir's {job} and {array_task} placeholders. Task 1 is preempted
# (held at step 150 until the signal comes): the task alone is requeued and resumes, task 0 is
# not run again.
printf '# two settings\n--set train.epochs=1\n\n--set train.epochs=5 --set train.lr=0.002\n' >"$WORK/sweep.txt"
array=$(CT_SWEEP="$WORK/sweep.txt" CT_TEST_HOLD_AT_STEP=150 "${SB[@]}" --array=0-1 --parsable -o "$WORK/sweep-%a.out" \
  slurm/sweep.sbatch "${T[@]}" --set output.checkpoint_every=0 --set "output.dir=$WORK/sweep-{job}/task-{array_task}")
wait_held "${array}_1" "$WORK/sweep-1.out" 150
scancel --signal=USR1 "${array}_1"
wait_requeued_done "${array}_0" "${array}_1"
for task in 0 1; do
  [[ "$(job_field "${array}_$task" JobState)" == "COMPLETED" ]] || { cat "$WORK/sweep-$task.out"; fail "array task $task did not complete"; }
done
[[ "$(job_field "${array}_0" Restarts)" -eq 0 ]] || fail "task 0 ran again: the requeue took the whole array"
[[ "$(job_field "${array}_1" Restarts)" -ge 1 ]] || fail "task 1 was not requeued"
grep -q "requeueing job ${array}_1" "$WORK/sweep-1.out" || { cat "$WORK/sweep-1.out"; fail "task 1 did not requeue itself by ARRAYID_TASKID"; }
grep -q "resumed from .*step-" "$WORK/sweep-1.out" || { cat "$WORK/sweep-1.out"; fail "task 1 did not resume mid-epoch"; }
[[ $(wc -l <"$WORK/sweep-$array/task-0/metrics.jsonl") -eq 1 && $(wc -l <"$WORK/sweep-$array/task-1/metrics.jsonl") -eq 5 ]] \
  || { cat "$WORK"/sweep-*.out; ls -R "$WORK" | head -40; fail "the sweep's tasks did not each train their own line"; }
grep -q "lr: 0.002" "$WORK/sweep-$array/task-1/config.yaml" || fail "task 1's config.yaml lacks its settings"
grep -q "dir: $WORK/sweep-$array/task-1" "$WORK/sweep-$array/task-1/config.yaml" || fail "config.yaml lacks the expanded dir"
echo "ok: sbatch --array=0-1 slurm/sweep.sbatch: one run directory per task; task 1 preempted, requeued alone (${array}_1), resumed"

# 2. Preempted mid-run, requeued, resumed. The job holds at global step 150 (epoch 3 of 64
# steps) until the signal comes (CT_TEST_HOLD_AT_STEP, exported to the job by sbatch), so the
# signal lands mid-epoch on a fast machine and on a loaded one; resumed at that step, the
# requeued job does not hold again.
job=$(CT_TEST_HOLD_AT_STEP=150 "${SB[@]}" --parsable -o "$WORK/second.out" slurm/single_node.sbatch "${T[@]}" \
  --set output.dir="$WORK/second" --set train.epochs=5 --set output.checkpoint_every=0)
wait_held "$job" "$WORK/second.out" 150
scancel --signal=USR1 "$job"
wait_requeued_done "$job"
state=$(job_field "$job" JobState)
cat "$WORK/second.out" | grep -E "train_step|preempted|resumed from" || true
[[ "$state" == "COMPLETED" ]] || { cat "$WORK/second.out"; fail "job $job ended $state"; }
[[ "$(job_field "$job" Restarts)" -ge 1 ]] || fail "job $job was not requeued"
grep -q "resumed from .*step-" "$WORK/second.out" || fail "the restarted job did not resume mid-epoch"
[[ $(wc -l <"$WORK/second/metrics.jsonl") -eq 5 ]] || fail "expected 5 epochs in metrics.jsonl"
echo "ok: scancel --signal=USR1 at step 150: checkpoint, exit 75, requeue, resumed mid-epoch, 5 epochs"

# 3. The scaling study as a batch job: srun steps of 1 and 2 ranks.
sbatch_wait "${SB[@]}" --nodes=1 --parsable -o "$WORK/scaling.out" slurm/scaling.sbatch --max-ranks 2 --epochs 2 \
  --out "$WORK/study" -- "${T[@]}" >/dev/null || { cat "$WORK/scaling.out"; fail "slurm/scaling.sbatch failed"; }
grep -q "^weak,2," "$WORK/study/results.csv" || { cat "$WORK/scaling.out"; fail "no 2-rank row from the Slurm study"; }
echo "ok: slurm/scaling.sbatch: $(( $(grep -c "" "$WORK/study/results.csv") - 1 )) runs under srun"
