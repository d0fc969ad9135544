#!/usr/bin/env bash
# README command 2: set up (with the test dependencies), check the sources' format, build with
# warnings as errors, and run every test: unit tests, MPI tests under mpiexec -n 1, 2 and 4,
# end-to-end runs of the binary; then the unit and MPI tests again in a second build with
# AddressSanitizer and UndefinedBehaviorSanitizer.
#   launch/test.sh [ctest arguments, e.g. -L unit]
# Environment: CT_SANITIZE=0 skips the sanitizer build (it adds a few minutes).
set -euo pipefail
cd "$(dirname "$0")/.."
CMAKE_ARGS="${CMAKE_ARGS:-} -DCT_WERROR=ON" launch/setup.sh --tests
launch/format.sh
source launch/mpi_env.sh
(cd "${CT_BUILD_DIR:-build}" && ctest --output-on-failure -j 2 "$@")

if [[ "${CT_SANITIZE:-1}" != "0" ]]; then
  echo "test: unit and MPI tests under AddressSanitizer and UndefinedBehaviorSanitizer (build-asan/)"
  # Built without NCCL too, so that the tests also cover a build that lacks it.
  # Without -Werror: the sanitizers at -O1 bring their own false warnings; the main build has it.
  CT_BUILD_DIR=build-asan CMAKE_ARGS="-DCT_SANITIZE=ON -DCT_WITH_NCCL=OFF" launch/setup.sh --tests >/dev/null
  # Open MPI and LibTorch keep allocations until exit by design: leaks are not checked.
  export ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1
  (cd build-asan && ctest --output-on-failure -j 2 -L "unit|mpi")
fi
