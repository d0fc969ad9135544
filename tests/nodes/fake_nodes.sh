#!/usr/bin/env bash
# Two "nodes" on this host for multi-node tests: each its own UTS namespace (hostname) and
# network namespace (its own loopback and one veth address, 10.N.0.1 and 10.N.0.2), so Open MPI
# between them sees two hosts and can reach the other only over TCP, as across a network.
#   tests/nodes/fake_nodes.sh start DIR NAME_A NAME_B   exits 77 (skip) with the reason if it cannot
#   tests/nodes/fake_nodes.sh stop DIR                  removes the namespaces (and their link)
# Then `tests/nodes/on_node.sh DIR NAME COMMAND...` runs a command on a node, and mpirun started
# on the first node reaches the second with `--mca plm_rsh_agent tests/nodes/rsh_agent.sh`
# (CT_NODES_DIR=DIR in the environment) in place of ssh.
set -euo pipefail
action=$1
DIR=$(realpath -m "$2")

skip() { echo "skipped: $*"; exit 77; }

stop() {
  [[ -d "$DIR" ]] || return 0
  for ns in "$DIR"/uts-* "$DIR"/net-*; do
    [[ -e "$ns" ]] && umount "$ns" 2>/dev/null || true
  done
  # The veth pair lives in the namespaces and goes with them.
  return 0
}

if [[ "$action" == "stop" ]]; then
  stop
  exit 0
fi
A=$3
B=$4
[[ $(id -u) -eq 0 ]] || skip "namespaces need root"
for tool in unshare nsenter ip; do
  command -v "$tool" >/dev/null || skip "$tool not found (apt-get install util-linux iproute2)"
done
mkdir -p "$DIR"
# A subnet and link name of our own, so two tests at once do not collide.
n=$(( ($$ % 200) + 20 ))
veth="ctv$$"
for node in "$A" "$B"; do
  touch "$DIR/uts-$node" "$DIR/net-$node"
  unshare --uts="$DIR/uts-$node" hostname "$node" || { stop; skip "unshare --uts failed"; }
  unshare --net="$DIR/net-$node" true || { stop; skip "unshare --net failed"; }
  nsenter --net="$DIR/net-$node" ip link set lo up
done
ip link add "$veth" type veth peer name "${veth}b" || { stop; skip "cannot create a veth pair"; }
for end in "$veth:$A:1" "${veth}b:$B:2"; do
  IFS=: read -r link node host <<<"$end"
  ip link set "$link" netns "$DIR/net-$node"
  nsenter --net="$DIR/net-$node" ip addr add "10.$n.0.$host/24" dev "$link"
  nsenter --net="$DIR/net-$node" ip link set "$link" up
done
printf '%s 10.%s.0.1\n%s 10.%s.0.2\n' "$A" "$n" "$B" "$n" >"$DIR/addresses"
