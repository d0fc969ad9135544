#!/usr/bin/env bash
# on_node.sh DIR NODE COMMAND...: runs COMMAND on a node made by fake_nodes.sh (its hostname and
# its network).
DIR=$1
NODE=$2
shift 2
exec nsenter --uts="$DIR/uts-$NODE" --net="$DIR/net-$NODE" -- "$@"
