# Shared by the two-node tests (sourced after tests/e2e/common.sh).

# two_node_placement FILE: the run's placement report shows node-a and node-b, 2 ranks each, local
# ranks from 0 on each node, and each node's ranks on their own cores (1 thread each).
two_node_placement() {
  local host local
  for host in node-a node-b; do
    for local in 0 1; do
      grep -qE "^ *$host  rank [0-3]/4  local $local/2  cpu  allowed [0-9,-]+  bound $local  threads 1 " "$1" \
        || { cat "$1"; fail "no line for local rank $local on $host bound to core $local"; }
    done
  done
}

# same_run DIR_A DIR_B EPOCHS: two run directories hold the same run, metrics and weights bit for bit.
same_run() {
  "$PY" "$E2E_DIR/runs.py" same "$1" "$2" --epochs "$3" --keys epoch,global_step,train_loss,val_loss,lr --weights
}

# ranks_ended PID...: every rank process ends within 30 s (after the job did: its daemons' last
# kills may still be on their way). A zombie (Z) has ended; only its parent's reaping is pending.
ranks_ended() {
  local pid state
  for pid in "$@"; do
    for _ in $(seq 300); do
      state=$(ps -o stat= -p "$pid" || true)
      [[ -z "$state" || "$state" == Z* ]] && break
      sleep 0.1
    done
    [[ -z "$state" || "$state" == Z* ]] || fail "rank pid $pid still runs 30 s after the job ended"
  done
}
