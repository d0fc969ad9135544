# Sourced by the launch scripts: lets Open MPI run as root (containers, CI), passes
# --bind-to none (clustertrain binds itself with hwloc; Open MPI would otherwise pin each of
# 1-2 ranks to a single core) and --oversubscribe only when the node has fewer cores than ranks.
if [[ $(id -u) -eq 0 ]]; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi
mpi_flags_for() {  # mpi_flags_for RANKS
  echo "--bind-to none"
  if (( $(nproc) < $1 )); then echo "--oversubscribe"; fi
}
