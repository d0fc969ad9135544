# Sourced by the launch scripts: lets Open MPI run as root (containers, CI), passes
# --bind-to none (clustertrain binds itself with hwloc; Open MPI would otherwise pin each of
# 1-2 ranks to a single core) and --oversubscribe only when the node has fewer cores than ranks.
# For scripts that start many processes, export_openblas_coretype sets OpenBLAS's kernel once.
if [[ $(id -u) -eq 0 ]]; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi
mpi_flags_for() {  # mpi_flags_for RANKS
  echo "--bind-to none"
  if (( $(nproc) < $1 )); then echo "--oversubscribe"; fi
}

# export_openblas_coretype CLUSTERTRAIN: on a CPU that this OpenBLAS does not know, each
# clustertrain process restarts itself with OPENBLAS_CORETYPE for the CPU (about 0.4 s; see
# cluster/openblas_kernel.h). Exports the kernel clustertrain chooses, once, so that the processes
# a script starts skip the restart, and peers loading the same OpenBLAS run the same kernel.
# A value already set is kept. Returns 0 whether or not it exported one.
export_openblas_coretype() {
  if [[ -n "${OPENBLAS_CORETYPE:-}" ]]; then return 0; fi
  local coretype
  coretype=$("$1" --version | grep -o "restarted itself with OPENBLAS_CORETYPE=[A-Za-z0-9]*" | cut -d= -f2) || true
  if [[ -n $coretype ]]; then export OPENBLAS_CORETYPE=$coretype; fi
}
