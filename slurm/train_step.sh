#!/usr/bin/env bash
# Run by the sbatch scripts in this folder (not by hand): one srun step of `clustertrain train`,
# and a requeue when the trainer stopped for preemption.
#
#   srun --mpi=pmix         PMIx wires up MPI (without it every task is a singleton: refused)
#        --cpu-bind=none    clustertrain binds each rank itself, to the cores next to its GPU
#        --kill-on-bad-exit a rank that fails ends the step at once
#   --resume auto           the newest checkpoint in output.dir, or a fresh start
#
# Exit code 75 means every rank stopped at the same step after SIGUSR1/SIGTERM (the sbatch
# --signal=USR1@300 warning before the time limit, or scancel --signal=USR1) and the checkpoint
# is written: the job is requeued and, started again, resumes from it.
# Environment: CT_CONFIG (default configs/gw_vae.yaml), CT_BIN (default build/clustertrain).
set -uo pipefail
cd "${SLURM_SUBMIT_DIR:-.}"
CONFIG=${CT_CONFIG:-configs/gw_vae.yaml}
BIN=${CT_BIN:-build/clustertrain}
echo "train_step: job ${SLURM_JOB_ID:-?} (start $(( ${SLURM_RESTART_COUNT:-0} + 1 ))) on ${SLURM_JOB_NODELIST:-?}:" \
     "${SLURM_NTASKS:-?} tasks, ${SLURM_CPUS_PER_TASK:-?} cpus each"
srun --mpi=pmix --cpu-bind=none --kill-on-bad-exit=1 "$BIN" train --config "$CONFIG" --resume auto "$@"
rc=$?
if [[ $rc -eq 75 ]]; then
  echo "train_step: preempted with a checkpoint written; requeueing job $SLURM_JOB_ID"
  scontrol requeue "$SLURM_JOB_ID"
  exit 0
fi
echo "train_step: clustertrain exited with $rc"
exit $rc
