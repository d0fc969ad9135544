#!/usr/bin/env bash
# A throwaway single-node Slurm for tests: munged, slurmctld and slurmd as the current user
# (root) on this host, configured in DIR with free ports. Cores are constrained as on a cluster:
# task/cgroup with ConstrainCores=yes (a step's tasks see only the step's cores) where this
# machine's cgroups allow it, else task/affinity; DIR/task_plugin says which. Nothing is written
# outside DIR but Slurm's cgroups, removed at stop.
#   tests/slurm/local_slurm.sh start DIR    exits 77 (skip) with the reason if it cannot run
#   tests/slurm/local_slurm.sh stop DIR     stops every daemon it started
# Clients then need SLURM_CONF=DIR/slurm.conf.
set -euo pipefail
action=$1
DIR=$(realpath -m "$2")

skip() { echo "skipped: $*"; exit 77; }

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

stop() {
  for pidfile in "$DIR/slurmd.pid" "$DIR/slurmctld.pid" "$DIR/munged.pid"; do
    [[ -s "$pidfile" ]] && kill "$(cat "$pidfile")" 2>/dev/null || true
  done
  for pidfile in "$DIR/slurmd.pid" "$DIR/slurmctld.pid" "$DIR/munged.pid"; do
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

mkdir -p "$DIR/state" "$DIR/spool" "$DIR/munge"
head -c 128 /dev/urandom >"$DIR/munge/munge.key"
chmod 700 "$DIR/munge"
chmod 400 "$DIR/munge/munge.key"
munged --force --key-file="$DIR/munge/munge.key" --socket="$DIR/munge/munge.socket" \
  --pid-file="$DIR/munged.pid" --log-file="$DIR/munged.log" --seed-file="$DIR/munge/seed" \
  || skip "munged would not start ($(tail -1 "$DIR/munged.log" 2>/dev/null))"

host=$(hostname -s)
cpus=$(nproc)
memory=$(( $(awk '/MemTotal/ {print int($2 / 1024)}' /proc/meminfo) / 2 ))
cat >"$DIR/slurm.conf" <<CONF
ClusterName=ctlocal
SlurmctldHost=$host
SlurmctldPort=$(free_port)
SlurmdPort=$(free_port)
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$DIR/munge/munge.socket
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$DIR/state
SlurmdSpoolDir=$DIR/spool
SlurmctldPidFile=$DIR/slurmctld.pid
SlurmdPidFile=$DIR/slurmd.pid
SlurmctldLogFile=$DIR/slurmctld.log
SlurmdLogFile=$DIR/slurmd.log
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
NodeName=$host CPUs=$cpus RealMemory=$memory State=UNKNOWN
PartitionName=debug Nodes=$host Default=YES MaxTime=INFINITE State=UP
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
slurm_cgroup="slurm_$host"
[[ -n "$(find /sys/fs/cgroup -maxdepth 2 -type d -name "$slurm_cgroup" 2>/dev/null)" ]] || echo "$slurm_cgroup" >"$DIR/cgroups_made"
configure task/cgroup,task/affinity proctrack/cgroup
slurmctld -f "$SLURM_CONF" || { stop; skip "slurmctld would not start: $(tail -2 "$DIR/slurmctld.log" 2>/dev/null)"; }
if ! slurmd -f "$SLURM_CONF"; then
  echo "local Slurm: no cgroup core constraint here ($(grep -m1 -i cgroup "$DIR/slurmd.log")); task/affinity" >&2
  configure task/affinity proctrack/pgid
  scontrol reconfigure >/dev/null 2>&1 || true
  slurmd -f "$SLURM_CONF" || { stop; skip "slurmd would not start: $(tail -2 "$DIR/slurmd.log" 2>/dev/null)"; }
fi
for _ in $(seq 300); do  # up to 60 s: a loaded machine starts daemons slowly
  state=$(sinfo -h -N -o %t 2>/dev/null | head -1 || true)
  [[ "$state" == "idle" ]] && exit 0
  sleep 0.2
done
stop
skip "the local Slurm node did not become idle (state '${state:-none}'): $(tail -2 "$DIR/slurmd.log" 2>/dev/null)"
