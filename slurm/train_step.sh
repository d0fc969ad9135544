#!/usr/bin/env bash
# Run by the sbatch scripts in this folder (not by hand): one srun step of `clustertrain train`,
# and a requeue when the trainer stopped for preemption.
#
#   srun --mpi=$CT_SRUN_MPI the PMI that wires up MPI (default pmix; without one every task is
#                           a singleton: refused). `srun --mpi=list` shows what a site offers.
#        --cpus-per-task    the job's $SLURM_CPUS_PER_TASK: since Slurm 22.05 a step no longer
#                           inherits it, and under a cgroup core constraint each rank would get
#                           one core
#        --cpu-bind=none    clustertrain binds each rank itself, to the cores next to its GPU
#        --kill-on-bad-exit a rank that fails ends the step at once
#   --resume auto           the newest checkpoint in output.dir, or a fresh start
#
# Exit code 75 means every rank stopped at the same step after SIGUSR1/SIGTERM (the sbatch
# --signal=USR1@300 warning before the time limit, or scancel --signal=USR1) and the checkpoint
# is written: the job is requeued (in a job array, this task alone) and, started again, resumes
# from it. So does any other exit code when the ranks' preemption marker (CT_PREEMPTED_MARKER,
# below) was written: a launcher signalled itself reports its own code.
# Environment: CT_CONFIG (default configs/gw_vae.yaml), CT_BIN (default build/clustertrain),
# CT_SRUN_MPI (default pmix).
set -uo pipefail
# The job runs where it was submitted from, which must be on a file system the nodes share.
cd "${SLURM_SUBMIT_DIR:-.}" || {
  echo "train_step.sh: cannot enter the submit directory '${SLURM_SUBMIT_DIR:-.}' on $(hostname):" \
       "submit from a directory the compute nodes share (home or project space, not /tmp)" >&2
  exit 1
}
CONFIG=${CT_CONFIG:-configs/gw_vae.yaml}
BIN=${CT_BIN:-build/clustertrain}
echo "train_step: job ${SLURM_JOB_ID:-?} (start $(( ${SLURM_RESTART_COUNT:-0} + 1 ))) on ${SLURM_JOB_NODELIST:-?}:" \
     "${SLURM_NTASKS:-?} tasks, ${SLURM_CPUS_PER_TASK:-?} cpus each"
PMI=${CT_SRUN_MPI:-pmix}
# `srun --mpi=list` prints "MPI plugin types are..." then one plugin a line (" pmix", "pmi2", ...).
offered=$(srun --mpi=list 2>&1 | sed -n 's/^[[:space:]]*\([a-z0-9_]*\)[[:space:]]*$/\1/p' | grep -v '^$' || true)
if [[ -n "$offered" ]] && ! grep -qx "$PMI" <<<"$offered"; then
  echo "train_step: this Slurm's srun has no MPI plugin '$PMI' (CT_SRUN_MPI); it offers:" $offered \
       "- set CT_SRUN_MPI to one that your Open MPI supports (pmix, else pmi2)" >&2
  exit 2
fi
CPUS=()
[[ -n "${SLURM_CPUS_PER_TASK:-}" ]] && CPUS=(--cpus-per-task="$SLURM_CPUS_PER_TASK")
# Rank 0 writes this file when the ranks stopped for preemption with a checkpoint written. The
# exit code alone can hide that: a launcher that was itself signalled (srun or mpirun getting
# SIGTERM) exits with its own code, not the ranks' 75. In the submit directory, which every node
# sees.
export CT_PREEMPTED_MARKER="$PWD/.clustertrain-preempted-${SLURM_JOB_ID:-$$}"
rm -f "$CT_PREEMPTED_MARKER"
srun --mpi="$PMI" "${CPUS[@]}" --cpu-bind=none --kill-on-bad-exit=1 "$BIN" train --config "$CONFIG" --resume auto "$@"
rc=$?
if [[ $rc -ne 75 && -f "$CT_PREEMPTED_MARKER" ]]; then
  echo "train_step: srun exited with $rc, but the ranks stopped for preemption and wrote" \
       "$(sed -n 's/^checkpoint: //p' "$CT_PREEMPTED_MARKER")"
  rc=75
fi
rm -f "$CT_PREEMPTED_MARKER"
if [[ $rc -eq 75 ]]; then
  # In a job array, SLURM_JOB_ID names this task's own job, but `scontrol requeue` of the
  # array's id would requeue every task: name the task as ARRAYID_TASKID.
  job=$SLURM_JOB_ID
  [[ -n "${SLURM_ARRAY_JOB_ID:-}" ]] && job="${SLURM_ARRAY_JOB_ID}_${SLURM_ARRAY_TASK_ID}"
  echo "train_step: preempted with a checkpoint written; requeueing job $job"
  scontrol requeue "$job"
  exit 0
fi
echo "train_step: clustertrain exited with $rc"
exit $rc
