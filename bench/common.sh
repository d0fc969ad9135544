# Shared by the demo-data benchmarks (runtime.sh, io.sh, precision.sh), sourced from the
# repository root: installs and builds what is missing, writes the demo data, sets up mpirun
# flags (mpi_flags_for), a scratch directory $WORK removed on exit, and median.
launch/setup.sh >/dev/null
launch/demo_data.sh
source launch/mpi_env.sh
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
mkdir -p bench/results
# median: of the numbers on stdin, one per line.
median() { sort -g | awk '{v[NR]=$1} END {print (NR%2 ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2)}'; }
