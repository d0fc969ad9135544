// MPI_CHECK(call): throws ct::CommError with the call, file:line, rank, host and MPI's own
// error string. MPI_COMM_WORLD is set to MPI_ERRORS_RETURN so that failures reach this check.
#pragma once

#include <mpi.h>

#include <string>

#include "util/error.h"

namespace ct {
[[noreturn]] void ThrowMpiError(int code, const char* call, const char* file, int line);
}

#define MPI_CHECK(call)                                                                        \
  do {                                                                                         \
    int ct_mpi_rc_ = (call);                                                                   \
    if (ct_mpi_rc_ != MPI_SUCCESS) ::ct::ThrowMpiError(ct_mpi_rc_, #call, __FILE__, __LINE__); \
  } while (0)
