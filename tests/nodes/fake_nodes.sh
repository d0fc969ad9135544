#!/usr/bin/env bash
# Two "nodes" on this host for multi-node tests: each its own UTS namespace (hostname) and
# network namespace (its own loopback and one veth address, 10.N.0.1 and 10.N.0.2), so Open MPI
# between them sees two hosts and can reach the other only over TCP, as across a network.
#   tests/nodes/fake_nodes.sh start DIR NAME_A NAME_B [--own-tmp [KEEP...]]
#                                                       exits 77 (skip) with the reason if it cannot;
#                                                       --own-tmp: each node its own /tmp (a mount
#                                                       namespace), as nodes have local disks; then
#                                                       what both must see lives outside /tmp, or
#                                                       is a KEEP path (the checkout, which a
#                                                       newcomer may have cloned under /tmp: the
#                                                       cluster's shared file system), bound into
#                                                       each node's /tmp at the same path
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
  for ns in "$DIR"/uts-* "$DIR"/net-* "$DIR"/mnt-*; do
    [[ -e "$ns" ]] && umount "$ns" 2>/dev/null || true
  done
  [[ -e "$DIR/private" ]] && umount "$DIR" 2>/dev/null && rm -f "$DIR/private"
  # The veth pair goes with the namespaces, unless a failed start left it here.
  [[ -s "$DIR/veth" ]] && ip link delete "$(cat "$DIR/veth")" 2>/dev/null || true
  return 0
}

if [[ "$action" == "stop" ]]; then
  stop
  exit 0
fi
A=$3
B=$4
OWN_TMP=${5:-}
KEEP=("${@:6}")
[[ $(id -u) -eq 0 ]] || skip "namespaces need root"
for tool in unshare nsenter ip; do
  command -v "$tool" >/dev/null || skip "$tool not found (apt-get install util-linux iproute2)"
done
mkdir -p "$DIR"
if [[ "$OWN_TMP" == "--own-tmp" ]]; then
  [[ "$DIR" != /tmp/* ]] || skip "--own-tmp needs DIR outside /tmp"
  # A mount namespace is kept by a bind mount of it, which must not be on a shared mount: DIR
  # becomes a private mount of itself, before any namespace is kept in it.
  mount --bind "$DIR" "$DIR" && touch "$DIR/private" && mount --make-private "$DIR" || { stop; skip "cannot make $DIR a private mount"; }
fi
# A subnet and link name of our own, so two tests at once do not collide.
n=$(( ($$ % 200) + 20 ))
veth="ctv$$"
for node in "$A" "$B"; do
  touch "$DIR/uts-$node" "$DIR/net-$node"
  unshare --uts="$DIR/uts-$node" hostname "$node" || { stop; skip "unshare --uts failed"; }
  unshare --net="$DIR/net-$node" true || { stop; skip "unshare --net failed"; }
  nsenter --net="$DIR/net-$node" ip link set lo up
done
if [[ "$OWN_TMP" == "--own-tmp" ]]; then
  for node in "$A" "$B"; do
    mkdir -p "$DIR/tmp-$node"
    chmod 1777 "$DIR/tmp-$node"
    touch "$DIR/mnt-$node"
    # In the node's mount namespace: each KEEP path under /tmp is held at DIR/keep-NODE-I, the
    # node's own /tmp goes over /tmp, and the held paths are bound back at their old places.
    unshare --mount="$DIR/mnt-$node" --propagation private bash -c '
      set -e
      dir=$1 node=$2
      shift 2
      kept=()
      for path in "$@"; do
        path=$(realpath -m "$path")
        [[ "$path" == /tmp/* ]] || continue
        mkdir -p "$dir/keep-$node-${#kept[@]}" && mount --bind "$path" "$dir/keep-$node-${#kept[@]}"
        kept+=("$path")
      done
      mount --bind "$dir/tmp-$node" /tmp
      for i in "${!kept[@]}"; do mkdir -p "${kept[$i]}" && mount --bind "$dir/keep-$node-$i" "${kept[$i]}"; done' \
      bash "$DIR" "$node" "${KEEP[@]}" \
      || { stop; skip "cannot give $node its own /tmp"; }
  done
fi
echo "$veth" >"$DIR/veth"
ip link add "$veth" type veth peer name "${veth}b" || { stop; skip "cannot create a veth pair"; }
for end in "$veth:$A:1" "${veth}b:$B:2"; do
  IFS=: read -r link node host <<<"$end"
  ip link set "$link" netns "$DIR/net-$node"
  nsenter --net="$DIR/net-$node" ip addr add "10.$n.0.$host/24" dev "$link"
  nsenter --net="$DIR/net-$node" ip link set "$link" up
done
printf '%s 10.%s.0.1\n%s 10.%s.0.2\n' "$A" "$n" "$B" "$n" >"$DIR/addresses"
