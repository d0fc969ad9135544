#!/usr/bin/env bash
# README command 2: set up (with the test dependencies), build, and run every test:
# unit tests, MPI tests under mpiexec -n 1, 2 and 4, and end-to-end runs of the binary.
#   launch/test.sh [ctest arguments, e.g. -L unit]
set -euo pipefail
cd "$(dirname "$0")/.."
launch/setup.sh --tests
source launch/mpi_env.sh
cd "${CT_BUILD_DIR:-build}"
ctest --output-on-failure -j 2 "$@"
