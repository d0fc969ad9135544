#!/usr/bin/env bash
# on_node.sh DIR NODE COMMAND...: runs COMMAND on a node made by fake_nodes.sh (its hostname and
# its network, and its own /tmp if it has one).
DIR=$1
NODE=$2
shift 2
MOUNT=()
[[ -e "$DIR/mnt-$NODE" ]] && MOUNT=(--mount="$DIR/mnt-$NODE")
exec nsenter --uts="$DIR/uts-$NODE" --net="$DIR/net-$NODE" "${MOUNT[@]}" --wd="$PWD" -- "$@"
