# slurm/train_step.sh's contract with Slurm, with srun and scontrol replaced by stubs that record
# what they are given (no Slurm needed; e2e/slurm.sh runs the script on a real one): the step
# gets the job's --cpus-per-task (a Slurm >= 22.05 step does not inherit it, and under a cgroup
# core constraint each rank would get one core), --mpi follows CT_SRUN_MPI and a plugin this
# srun lacks is a clear error, and a preempted job-array task requeues itself, not the array.
source "$(dirname "$0")/common.sh"
STUBS="$WORK/bin"
mkdir -p "$STUBS"
cat >"$STUBS/srun" <<'STUB'
#!/usr/bin/env bash
if [[ "$1" == "--mpi=list" ]]; then
  printf 'MPI plugin types are...\n\tpmix\n\tnone\n\tpmi2\nspecific pmix plugin versions available: pmix_v4\n'
  exit 0
fi
echo "$*" >"$STUB_LOG.srun"
# STUB_MARK: as rank 0 does when the ranks stopped for preemption (src/run/run_directory.h).
[[ -n "${STUB_MARK:-}" ]] && printf 'checkpoint: run/checkpoints/epoch-000002.step-000010.pt\n' >"$CT_PREEMPTED_MARKER"
exit "${STUB_RC:-0}"
STUB
printf '#!/usr/bin/env bash\necho "$*" >"$STUB_LOG.scontrol"\n' >"$STUBS/scontrol"
chmod +x "$STUBS/srun" "$STUBS/scontrol"
step() {  # step [VAR=VALUE ...]: train_step.sh with the stubs; its output in $WORK/step.txt
  rm -f "$WORK/log".*
  env PATH="$STUBS:$PATH" STUB_LOG="$WORK/log" SLURM_JOB_ID=123 CT_BIN=/bin/true "$@" \
    bash slurm/train_step.sh --set train.epochs=1 >"$WORK/step.txt" 2>&1
}

step SLURM_CPUS_PER_TASK=8 || fail "train_step.sh failed: $(cat "$WORK/step.txt")"
grep -q -- "--mpi=pmix --cpus-per-task=8 --cpu-bind=none --kill-on-bad-exit=1 /bin/true train .* --set train.epochs=1" \
  "$WORK/log.srun" || fail "srun got: $(cat "$WORK/log.srun")"
step || fail "train_step.sh without SLURM_CPUS_PER_TASK failed"
! grep -q -- "--cpus-per-task" "$WORK/log.srun" || fail "--cpus-per-task without SLURM_CPUS_PER_TASK: $(cat "$WORK/log.srun")"
echo "ok: the srun step gets the job's --cpus-per-task"

step CT_SRUN_MPI=pmi2 || fail "CT_SRUN_MPI=pmi2 failed"
grep -q -- "^--mpi=pmi2 " "$WORK/log.srun" || fail "CT_SRUN_MPI=pmi2: srun got $(cat "$WORK/log.srun")"
rc=0
step CT_SRUN_MPI=pmi3 || rc=$?
[[ $rc -eq 2 && ! -e "$WORK/log.srun" ]] || fail "CT_SRUN_MPI=pmi3: exit $rc, srun ran: $(cat "$WORK/step.txt")"
grep -q "no MPI plugin 'pmi3' (CT_SRUN_MPI); it offers: pmix none pmi2" "$WORK/step.txt" || fail "$(cat "$WORK/step.txt")"
echo "ok: CT_SRUN_MPI selects srun --mpi; one this srun lacks is an error listing what it offers"

# A job submitted from a directory the compute node lacks (a login node's /tmp) says so, not
# "build/clustertrain: not found" from wherever it landed.
rc=0
step SLURM_SUBMIT_DIR="$WORK/login-node-only" || rc=$?
[[ $rc -eq 1 && ! -e "$WORK/log.srun" ]] || fail "a submit directory that is not there: exit $rc, or srun ran"
grep -q "cannot enter the submit directory '$WORK/login-node-only' on $(hostname): submit from a directory the compute nodes share" \
  "$WORK/step.txt" || fail "$(cat "$WORK/step.txt")"
echo "ok: a submit directory missing on the node is named, with the fix"

step STUB_RC=75 || fail "a preempted step did not exit 0"
[[ "$(cat "$WORK/log.scontrol")" == "requeue 123" ]] || fail "requeue of a job: $(cat "$WORK/log.scontrol")"
step STUB_RC=75 SLURM_JOB_ID=130 SLURM_ARRAY_JOB_ID=127 SLURM_ARRAY_TASK_ID=3 || fail "a preempted array task did not exit 0"
[[ "$(cat "$WORK/log.scontrol")" == "requeue 127_3" ]] || fail "requeue of an array task: $(cat "$WORK/log.scontrol")"
rc=0
step STUB_RC=3 || rc=$?
[[ $rc -eq 3 && ! -e "$WORK/log.scontrol" ]] || fail "a failed step: exit $rc, or it was requeued"
echo "ok: a preempted job requeues itself; a job-array task requeues ARRAYID_TASKID, not the whole array"

# srun signalled itself exits with its own code (here 1, as mpirun does on SIGTERM) though the
# ranks checkpointed: their marker requeues the job all the same, and is removed.
step STUB_RC=1 STUB_MARK=1 || fail "a step whose ranks wrote the preemption marker did not exit 0: $(cat "$WORK/step.txt")"
[[ "$(cat "$WORK/log.scontrol")" == "requeue 123" ]] || fail "the marked step was not requeued"
grep -q "srun exited with 1, but the ranks stopped for preemption and wrote run/checkpoints/epoch-000002.step-000010.pt" \
  "$WORK/step.txt" || fail "$(cat "$WORK/step.txt")"
[[ -z $(ls -A | grep clustertrain-preempted) ]] || fail "train_step.sh left its marker in $PWD"
rc=0
step STUB_RC=1 || rc=$?
[[ $rc -eq 1 && ! -e "$WORK/log.scontrol" ]] || fail "a failed step without the marker: exit $rc, or it was requeued"
echo "ok: a step whose launcher exits non-75 after the ranks' preemption checkpoint is requeued"
