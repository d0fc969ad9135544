#!/usr/bin/env bash
# Open MPI's launch agent (--mca plm_rsh_agent) for the nodes of fake_nodes.sh, in place of
# ssh: mpirun calls it as `rsh_agent.sh [ssh options] HOST COMMAND...` to start its daemon on
# HOST. Like ssh, the command gets a fresh environment (only PATH, LD_LIBRARY_PATH and HOME, as
# a login shell's profile would set them), so what a rank needs must travel with mpirun -x.
# CT_NODES_DIR names the fake_nodes.sh directory.
while [[ "${1:-}" == -* ]]; do shift; done
host=$1
shift
exec "$(dirname "$0")/on_node.sh" "${CT_NODES_DIR:?}" "$host" \
  env -i PATH="$PATH" LD_LIBRARY_PATH="${LD_LIBRARY_PATH:-}" HOME="$HOME" CT_NODES_DIR="$CT_NODES_DIR" \
  /bin/sh -c "$*"
