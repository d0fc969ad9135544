#!/usr/bin/env bash
# A throwaway Slurm for tests: munged, slurmctld and slurmd as the current user (root) on this
# host, configured in DIR with free ports.
#   tests/slurm/local_slurm.sh start DIR                 one node: this host
#   tests/slurm/local_slurm.sh start DIR NODES_DIR A B   two nodes A and B made by
#                                                         tests/nodes/fake_nodes.sh in NODES_DIR:
#                                                         a slurmd in each, slurmctld on A
#   tests/slurm/local_slurm.sh stop DIR                  stops every daemon it started
# Exits 77 (skip) with the reason if it cannot run. Clients then need SLURM_CONF=DIR/slurm.conf
# (and, with nodes, to run on one: tests/nodes/on_node.sh NODES_DIR A sbatch ...).
# One node: cores are constrained as on a cluster, task/cgroup with ConstrainCores=yes (a step's
# tasks see only the step's cores) where this machine's cgroups allow it, else task/affinity;
# DIR/task_plugin says which. Two nodes share this host's cores and use task/affinity. Nothing
# is written outside DIR but Slurm's cgroups, removed at stop.
set -euo pipefail
action=$1
DIR=$(realpath -m "$2")
NODES_DIR=${3:-}
NODES=("${@:4}")

skip() { echo "skipped: $*"; exit 77; }

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

stop() {
  local pidfiles=("$DIR"/slurmd-*.pid "$DIR/slurmctld.pid" "$DIR/munged.pid")
  for pidfile in "${pidfiles[@]}"; do
    [[ -s "$pidfile" ]] && kill "$(cat "$pidfile")" 2>/dev/null || true
  done
  for pidfile in "${pidfiles[@]}"; do
    for _ in $(seq 50); do
      [[ -s "$pidfile" ]] && kill -0 "$(cat "$pidfile")" 2>/dev/null || break
      sleep 0.1
    done
    [[ -s "$pidfile" ]] && kill -9 "$(cat "$pidfile")" 2>/dev/null || true
  done
  # The (empty) cgroups slurmd made for its node, unless they were there before we started.
  if [[ -s "$DIR/cgroups_made" ]]; then
    for made in $(find /sys/fs/cgroup -maxdepth 2 -type d -name "$(cat "$DIR/cgroups_made")" 2>/dev/null); do
      find "$made" -depth -type d -exec rmdir {} + 2>/dev/null || true
    done
  fi
}

if [[ "$action" == "stop" ]]; then
  stop
  exit 0
fi

[[ $(id -u) -eq 0 ]] || skip "the local Slurm test runs its daemons as root"
for tool in munged slurmctld slurmd sbatch srun scontrol; do
  command -v "$tool" >/dev/null || skip "$tool not found (apt-get install slurm-wlm munge)"
done
PLUGINS=$(dirname "$(find /usr/lib -name mpi_pmix.so -path '*slurm*' 2>/dev/null | head -1)")
[[ -n "$PLUGINS" && "$PLUGINS" != "." ]] || skip "Slurm's mpi_pmix plugin not found"

mkdir -p "$DIR/state" "$DIR/munge"
head -c 128 /dev/urandom >"$DIR/munge/munge.key"
chmod 700 "$DIR/munge"
chmod 400 "$DIR/munge/munge.key"
munged --force --key-file="$DIR/munge/munge.key" --socket="$DIR/munge/munge.socket" \
  --pid-file="$DIR/munged.pid" --log-file="$DIR/munged.log" --seed-file="$DIR/munge/seed" \
  || skip "munged would not start ($(tail -1 "$DIR/munged.log" 2>/dev/null))"

cpus=$(nproc)
memory=$(( $(awk '/MemTotal/ {print int($2 / 1024)}' /proc/meminfo) / 2 ))
if [[ -n "$NODES_DIR" ]]; then
  address() { awk -v node="$1" '$1 == node {print $2}' "$NODES_DIR/addresses"; }
  controller="${NODES[0]}($(address "${NODES[0]}"))"
  node_lines=$(for node in "${NODES[@]}"; do
    echo "NodeName=$node NodeAddr=$(address "$node") CPUs=$cpus RealMemory=$(( memory / ${#NODES[@]} )) State=UNKNOWN"
  done)
  partition_nodes=$(IFS=,; echo "${NODES[*]}")
else
  host=$(hostname -s)
  NODES=("$host")
  controller=$host
  node_lines="NodeName=$host CPUs=$cpus RealMemory=$memory State=UNKNOWN"
  partition_nodes=$host
fi
cat >"$DIR/slurm.conf" <<CONF
ClusterName=ctlocal
SlurmctldHost=$controller
SlurmctldPort=$(free_port)
SlurmdPort=$(free_port)
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$DIR/munge/munge.socket
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$DIR/state
SlurmdSpoolDir=$DIR/spool-%n
SlurmctldPidFile=$DIR/slurmctld.pid
SlurmdPidFile=$DIR/slurmd-%n.pid
SlurmctldLogFile=$DIR/slurmctld.log
SlurmdLogFile=$DIR/slurmd-%n.log
PluginDir=$PLUGINS
ProctrackType=@PROCTRACK@
TaskPlugin=@TASK@
MpiDefault=none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
JobRequeue=1
KillWait=10
MinJobAge=600
$node_lines
PartitionName=debug Nodes=$partition_nodes Default=YES MaxTime=INFINITE State=UP
CONF
cat >"$DIR/cgroup.conf" <<CONF
ConstrainCores=yes
CONF
mv "$DIR/slurm.conf" "$DIR/slurm.conf.in"
configure() {  # configure TASK_PLUGIN PROCTRACK_PLUGIN
  sed "s|@TASK@|$1|; s|@PROCTRACK@|$2|" "$DIR/slurm.conf.in" >"$DIR/slurm.conf"
  echo "$1" >"$DIR/task_plugin"
}
export SLURM_CONF="$DIR/slurm.conf"
for node in "${NODES[@]}"; do mkdir -p "$DIR/spool-$node"; done
if [[ -n "$NODES_DIR" ]]; then
  on() { "$(dirname "$0")/../nodes/on_node.sh" "$NODES_DIR" "$@"; }
  configure task/affinity proctrack/pgid
  on "${NODES[0]}" slurmctld -f "$SLURM_CONF" || { stop; skip "slurmctld would not start: $(tail -2 "$DIR/slurmctld.log" 2>/dev/null)"; }
  for node in "${NODES[@]}"; do
    on "$node" slurmd -f "$SLURM_CONF" || { stop; skip "slurmd on $node would not start: $(tail -2 "$DIR/slurmd-$node.log" 2>/dev/null)"; }
  done
  client=(on "${NODES[0]}")
else
  slurm_cgroup="slurm_${NODES[0]}"
  [[ -n "$(find /sys/fs/cgroup -maxdepth 2 -type d -name "$slurm_cgroup" 2>/dev/null)" ]] || echo "$slurm_cgroup" >"$DIR/cgroups_made"
  configure task/cgroup,task/affinity proctrack/cgroup
  slurmctld -f "$SLURM_CONF" || { stop; skip "slurmctld would not start: $(tail -2 "$DIR/slurmctld.log" 2>/dev/null)"; }
  if ! slurmd -f "$SLURM_CONF"; then
    echo "local Slurm: no cgroup core constraint here ($(grep -m1 -i cgroup "$DIR/slurmd-${NODES[0]}.log")); task/affinity" >&2
    configure task/affinity proctrack/pgid
    scontrol reconfigure >/dev/null 2>&1 || true
    slurmd -f "$SLURM_CONF" || { stop; skip "slurmd would not start: $(tail -2 "$DIR/slurmd-${NODES[0]}.log" 2>/dev/null)"; }
  fi
  client=()
fi
for _ in $(seq 300); do  # up to 60 s: a loaded machine starts daemons slowly
  states=$("${client[@]}" sinfo -h -N -o %t 2>/dev/null | sort -u | tr '\n' ' ' || true)
  [[ "$states" == "idle " && $("${client[@]}" sinfo -h -N -o %N | wc -l) -eq ${#NODES[@]} ]] && exit 0
  sleep 0.2
done
stop
skip "the local Slurm nodes did not all become idle (states '${states:-none}'): $(tail -2 "$DIR"/slurmd-*.log 2>/dev/null)"
