// Files whose rows say which row they are: input row i = [i, i, ...], target row i = [-i, ...],
// so that a batch or a loaded slice tells which global rows it holds.
#pragma once

#include <mpi.h>

#include <string>

#include "data/h5_file.h"

namespace ct::test {

// Collective over comm: `rows` rows of `length` values, holding the numbers first .. first+rows-1.
inline void WriteIndexedRows(const std::string& path, MPI_Comm comm, int64_t first, int64_t rows, int64_t length) {
  ParallelH5File file(path, ParallelH5File::Mode::kCreate, comm);
  file.CreateFloatRows("input", {rows, length});
  file.CreateFloatRows("target", {rows, length});
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  const int64_t begin = rows * rank / size, end = rows * (rank + 1) / size;
  for (float sign : {1.0f, -1.0f}) {
    file.WriteRows(sign > 0 ? "input" : "target", begin, end - begin, [&](int64_t row, int64_t n, float* out) {
      for (int64_t i = 0; i < n * length; ++i) out[i] = sign * static_cast<float>(first + row + i / length);
    });
  }
}

}  // namespace ct::test
