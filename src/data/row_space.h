// Several files as one dataset: the rows of files 0, 1, 2, ... numbered one after another
// (global rows). Sharding works on global rows; readers turn a range of them into pieces of
// files. Pure, no I/O.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "data/sharding.h"

namespace ct {

// Rows [file_row, file_row + rows) of file `file`.
struct FilePiece {
  size_t file = 0;
  int64_t file_row = 0;
  int64_t rows = 0;
};

class RowSpace {
 public:
  RowSpace() = default;
  explicit RowSpace(const std::vector<int64_t>& rows_per_file);

  int64_t Rows() const { return first_.back(); }
  size_t Files() const { return first_.size() - 1; }
  int64_t FirstRow(size_t file) const { return first_[file]; }
  int64_t FileRows(size_t file) const { return first_[file + 1] - first_[file]; }

  // The global rows `range` as pieces of files, in order; no empty pieces.
  std::vector<FilePiece> Pieces(RowRange range) const;

  // The file holding global row `row`, and the row's number in it (rows = 1).
  FilePiece Locate(int64_t row) const;

 private:
  std::vector<int64_t> first_ = {0};  // first global row of each file, then the total
};

}  // namespace ct
