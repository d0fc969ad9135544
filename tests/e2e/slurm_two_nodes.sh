# slurm/multi_node.sbatch on a 2-node Slurm on this host: two fake nodes (tests/nodes/fake_nodes.sh:
# own hostname, own network over a veth pair, own /tmp), a slurmd in each, slurmctld on node-a
# (tests/slurm/local_slurm.sh), srun --mpi=pmix across them. Checked: the job runs 2 ranks on
# each node with local ranks from 0 and each node's cores split; a preempted job (scancel
# --signal=USR1) checkpoints on both nodes, is requeued, resumes and equals the uninterrupted
# job bit for bit; a rank killed on node-b ends the whole job. Skipped, with the reason, where
# the namespaces or the daemons cannot start.
source "$(dirname "$0")/common.sh"
need_python
# Each node has its own /tmp, so what both must see (the cluster's shared file system) lives
# outside it, or is bound into each node's /tmp (the checkout, below).
rm -rf "$WORK"
WORK=$(mktemp -d /var/tmp/ct-e2e.XXXXXX)
NODES="$WORK/nodes"
SLURM_DIR="$WORK/slurm"
trap 'tests/slurm/local_slurm.sh stop "$SLURM_DIR"; tests/nodes/fake_nodes.sh stop "$NODES"; rm -rf "$WORK"' EXIT
# The checkout (and the build, wherever it is) stays visible on both nodes, as a cluster's shared
# file system would be, even when a newcomer cloned it under /tmp.
tests/nodes/fake_nodes.sh start "$NODES" node-a node-b --own-tmp "$PWD" "$(dirname "$(realpath "$BIN")")" || exit $?
tests/slurm/local_slurm.sh start "$SLURM_DIR" "$NODES" node-a node-b || exit $?
export SLURM_CONF="$SLURM_DIR/slurm.conf"
SLURM_CLIENT=(tests/nodes/on_node.sh "$NODES" node-a)  # users submit from a login or compute node
source tests/slurm/jobs.sh
source tests/nodes/checks.sh
tiny_data "$WORK" 4096  # 32 steps an epoch at 4 ranks x 32 rows
export CT_CONFIG=configs/tiny.yaml CT_BIN="$BIN"
SB=("${SLURM_CLIENT[@]}" sbatch --nodes=2 --ntasks-per-node=2 --cpus-per-task=1 --gpus-per-node=0 --time=10)
T=(--set data.train="$WORK/train.h5" --set data.val="$WORK/val.h5" --set train.epochs=3 --set output.checkpoint_every=0)

# 1. The job runs to the end on both nodes.
sbatch_wait "${SB[@]}" --parsable -o "$WORK/two.out" slurm/multi_node.sbatch "${T[@]}" --set output.dir="$WORK/two" >/dev/null \
  || { cat "$WORK/two.out"; fail "sbatch --nodes=2 slurm/multi_node.sbatch failed"; }
grep -q "train_step: job .* on node-a,node-b: 4 tasks" "$WORK/two.out" || { cat "$WORK/two.out"; fail "the job did not get both nodes"; }
two_node_placement "$WORK/two.out"
[[ $(wc -l <"$WORK/two/metrics.jsonl") -eq 3 ]] || { cat "$WORK/two.out"; fail "metrics.jsonl lacks epochs"; }
echo "ok: sbatch --nodes=2 slurm/multi_node.sbatch: 2 ranks on each node, local ranks 0 and 1 on each, own cores"

# 2. Preempted at step 40 (held there until the signal comes), requeued, resumed: the same run.
job=$(CT_TEST_HOLD_AT_STEP=40 "${SB[@]}" --parsable -o "$WORK/pre.out" slurm/multi_node.sbatch "${T[@]}" \
  --set output.dir="$WORK/pre")
wait_held "$job" "$WORK/pre.out" 40
"${SLURM_CLIENT[@]}" scancel --signal=USR1 "$job"
wait_requeued_done "$job"
[[ "$(job_field "$job" JobState)" == "COMPLETED" && "$(job_field "$job" Restarts)" -ge 1 ]] \
  || { cat "$WORK/pre.out"; fail "job $job: $(job_field "$job" JobState) after $(job_field "$job" Restarts) restarts"; }
grep -q "resumed from .*, step 40;" "$WORK/pre.out" || { cat "$WORK/pre.out"; fail "the requeued job did not resume at step 40"; }
same_run "$WORK/two" "$WORK/pre" 3 || fail "the preempted 2-node job differs from the uninterrupted one"
echo "ok: scancel --signal=USR1: both nodes checkpointed at step 40, requeued, resumed; equal to the uninterrupted job"

# 3. A rank killed on node-b ends the job (srun --kill-on-bad-exit) on both nodes.
job=$(CT_TEST_HOLD_AT_STEP=40 "${SB[@]}" --parsable --no-requeue -o "$WORK/killed.out" slurm/multi_node.sbatch "${T[@]}" \
  --set output.dir="$WORK/killed")
wait_held "$job" "$WORK/killed.out" 40
victim=$(grep -oE "node-b  rank [0-3]/4  local 1/2 .* pid [0-9]+" "$WORK/killed.out" | grep -oE "[0-9]+$")
ranks=$(grep -oE "  rank [0-3]/4  .*  pid [0-9]+" "$WORK/killed.out" | grep -oE "[0-9]+$")
[[ -n "$victim" && $(wc -w <<<"$ranks") -eq 4 ]] || { cat "$WORK/killed.out"; fail "no pids in the placement report"; }
kill -9 "$victim"
deadline=$(( SECONDS + 60 ))
until [[ "$(job_field "$job" JobState)" =~ ^(FAILED|COMPLETED|CANCELLED)$ ]]; do
  (( SECONDS < deadline )) || { cat "$WORK/killed.out"; fail "job $job still $(job_field "$job" JobState) 60 s after a rank was killed"; }
  sleep 0.2
done
[[ "$(job_field "$job" JobState)" == "FAILED" ]] || { cat "$WORK/killed.out"; fail "job $job ended $(job_field "$job" JobState)"; }
ranks_ended $ranks
echo "ok: a rank killed on node-b: job $job FAILED and no rank is left on either node"
