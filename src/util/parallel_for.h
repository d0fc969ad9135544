// at::parallel_for, for the files that split a loop over the rank's threads. With LibTorch's
// OpenMP backend (Debian's and pip's) its parallel region is opened in the header itself
// (ATen/ParallelOpenMP.h), so a file that calls it runs the whole loop on one thread unless it
// is compiled with OpenMP too. Such files include this header and are listed in
// CMakeLists.txt's CT_OPENMP_SOURCES; a file missing from that list does not compile.
#pragma once

#include <ATen/Parallel.h>

#if AT_PARALLEL_OPENMP && !defined(_OPENMP)
#error "this file calls at::parallel_for: add it to CT_OPENMP_SOURCES in CMakeLists.txt (compiled with OpenMP)"
#endif
