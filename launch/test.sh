#!/usr/bin/env bash
# README command 2: set up (with the test dependencies), build with warnings as errors, check
# the sources' format, and run every test: unit tests, MPI tests under mpiexec -n 1, 2 and 4,
# end-to-end runs of the binary; then the unit and MPI tests again in a second build with
# AddressSanitizer and UndefinedBehaviorSanitizer, against MPICH.
#   launch/test.sh [ctest arguments, e.g. -L unit]      against Debian's LibTorch 1.13.1 (build/)
#   launch/test.sh --torch pip [ctest arguments]        against LibTorch 2.x from PyPI (build-torch2/;
#       see launch/setup.sh), no sanitizer build; e2e_torch_versions then compares it with build/
# Environment: CT_SANITIZE=0 skips the sanitizer build (it adds a few minutes).
set -euo pipefail
cd "$(dirname "$0")/.."
TORCH=debian
if [[ "${1:-}" == "--torch" ]]; then
  TORCH=${2:?"--torch takes debian or pip"}
  shift 2
fi
if [[ "$TORCH" == pip ]]; then
  BUILD_DIR=${CT_BUILD_DIR:-build-torch2}
  # Debian's build (made by `launch/test.sh` first) and Debian's python3-torch are the other
  # version for e2e_torch_versions, which is skipped without them.
  OTHER="-DCT_OTHER_BIN=$PWD/build/clustertrain -DCT_OTHER_PYTHON=/usr/bin/python3"
  VENV=${CT_TORCH_VENV:-.venv-torch}
  [[ "$VENV" == /* ]] || VENV=$PWD/$VENV  # relative to the repository, or absolute
  OTHER+=" -DCT_THIS_PYTHON=$VENV/bin/python"
  CT_BUILD_DIR=$BUILD_DIR CMAKE_ARGS="${CMAKE_ARGS:-} -DCT_WERROR=ON $OTHER" launch/setup.sh --torch pip --tests
else
  BUILD_DIR=${CT_BUILD_DIR:-build}
  CT_BUILD_DIR=$BUILD_DIR CMAKE_ARGS="${CMAKE_ARGS:-} -DCT_WERROR=ON" launch/setup.sh --tests
fi
launch/format.sh
source launch/mpi_env.sh
# On a CPU that this OpenBLAS does not know, every clustertrain process would restart itself
# (about 0.4 s: a quarter of some e2e tests' time). e2e_runtime unsets it to test the restart.
export_openblas_coretype "$BUILD_DIR/clustertrain"
if [[ -n "${OPENBLAS_CORETYPE:-}" ]]; then echo "test: OPENBLAS_CORETYPE=$OPENBLAS_CORETYPE for every test"; fi
(cd "$BUILD_DIR" && ctest --output-on-failure -j 2 "$@")

if [[ "$TORCH" == debian && "${CT_SANITIZE:-1}" != "0" ]]; then
  echo "test: unit and MPI tests under AddressSanitizer and UndefinedBehaviorSanitizer, against MPICH (build-asan-mpich/)"
  # Built without NCCL too, so that the tests also cover a build that lacks it, and against
  # MPICH (the family of Cray MPICH, Intel MPI and MVAPICH; the main build has Open MPI), so
  # that the MPI code is tested with both. Without -Werror: the sanitizers at -O1 bring false
  # warnings of their own; the main build has it.
  MPICH_ARGS="-DMPI_C_COMPILER=/usr/bin/mpicc.mpich -DMPI_CXX_COMPILER=/usr/bin/mpicxx.mpich"
  MPICH_ARGS+=" -DHDF5_C_COMPILER_EXECUTABLE=/usr/bin/h5pcc.mpich -DMPIEXEC_EXECUTABLE=/usr/bin/mpiexec.mpich"
  CT_BUILD_DIR=build-asan-mpich CMAKE_ARGS="-DCT_SANITIZE=ON -DCT_WITH_NCCL=OFF $MPICH_ARGS" \
    launch/setup.sh --tests >/dev/null
  # MPI and LibTorch keep allocations until exit by design: leaks are not checked.
  export ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1
  (cd build-asan-mpich && ctest --output-on-failure -j 2 -L "unit|mpi")
fi
