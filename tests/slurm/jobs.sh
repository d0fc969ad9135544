# Shared by the Slurm tests (sourced after tests/e2e/common.sh): reading and waiting for jobs.
# SLURM_CLIENT: a command prefix that runs a client where slurmctld can be reached (empty on
# this host; tests/nodes/on_node.sh NODES_DIR NODE for fake nodes).
[[ -v SLURM_CLIENT ]] || SLURM_CLIENT=()
job_field() { "${SLURM_CLIENT[@]}" scontrol show job "$1" | grep -o "$2=[^ ]*" | head -1 | cut -d= -f2; }
# job_ended STATE: whether a job in STATE has ended (COMPLETED or one of Slurm's failure states).
job_ended() {
  case "$1" in
    COMPLETED | FAILED | CANCELLED | TIMEOUT | NODE_FAIL | OUT_OF_MEMORY | BOOT_FAIL | DEADLINE | PREEMPTED) return 0 ;;
  esac
  return 1
}
# sbatch_wait SBATCH_COMMAND... --parsable ...: submits, prints the job id and returns once the job
# has ended: 0 if it COMPLETED, as `sbatch --wait` would, which polls after 2, 4, 8 and then every
# 10 s, up to 10 s lost on each job; this polls every 0.2 s.
sbatch_wait() {
  local job state deadline=$(( SECONDS + 300 ))
  job=$("$@") || return 1
  echo "$job"
  while (( SECONDS < deadline )); do
    state=$(job_field "$job" JobState)
    if job_ended "$state"; then
      [[ "$state" == "COMPLETED" ]] && return 0
      return 1
    fi
    sleep 0.2
  done
  echo "job $job did not end in 300 s" >&2
  return 1
}
# wait_held JOB OUTPUT STEP: until the job's trainer holds at STEP (CT_TEST_HOLD_AT_STEP).
wait_held() {
  local deadline=$(( SECONDS + 300 )) state
  until grep -q "held at global step $3" "$2" 2>/dev/null; do
    state=$(job_field "$1" JobState)
    [[ "$state" == "PENDING" || "$state" == "RUNNING" ]] || { cat "$2"; fail "job $1 ended $state before step $3"; }
    (( SECONDS < deadline )) || { cat "$2"; fail "job $1 did not reach step $3 in 300 s"; }
    sleep 0.2
  done
}
# wait_requeued_done JOB...: until every job has ended; a requeued one is released early (Slurm
# holds a requeued job for about 2 minutes, Reason=BeginTime; the test does not wait).
wait_requeued_done() {
  local deadline=$(( SECONDS + 600 )) job state pending
  while (( SECONDS < deadline )); do
    pending=0
    for job in "$@"; do
      state=$(job_field "$job" JobState)
      job_ended "$state" && continue
      pending=1
      # Released once its first run's step daemons are gone and no node is still completing a
      # job (a new step of the same id would collide with the old one's leftovers, which Slurm's
      # 2-minute hold leaves time to clear; a loaded machine clears them later).
      if [[ "$state" == "PENDING" && "$(job_field "$job" Restarts)" -ge 1 && "$(job_field "$job" Reason)" == "BeginTime" ]] \
         && ! pgrep -f "^slurmstepd: \[$(job_field "$job" JobId)\." >/dev/null \
         && [[ -z "$("${SLURM_CLIENT[@]}" sinfo -h -t completing -o %N)" ]]; then
        "${SLURM_CLIENT[@]}" scontrol update JobId="$job" StartTime=now || true
      fi
    done
    (( pending )) || return 0
    sleep 0.2
  done
  fail "jobs $* did not end in 600 s"
}
