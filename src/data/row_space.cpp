#include "data/row_space.h"

#include <algorithm>

namespace ct {

RowSpace::RowSpace(const std::vector<int64_t>& rows_per_file) {
  for (int64_t rows : rows_per_file) first_.push_back(first_.back() + rows);
}

FilePiece RowSpace::Locate(int64_t row) const {
  // The last file starting at or before `row` (skipping any empty files before it).
  const auto after = std::upper_bound(first_.begin(), first_.end() - 1, row);
  const auto file = static_cast<size_t>(after - first_.begin()) - 1;
  return {file, row - first_[file], 1};
}

std::vector<FilePiece> RowSpace::Pieces(RowRange range) const {
  std::vector<FilePiece> pieces;
  int64_t row = range.begin;
  while (row < range.end) {
    FilePiece piece = Locate(row);
    piece.rows = std::min(range.end, first_[piece.file + 1]) - row;
    pieces.push_back(piece);
    row += piece.rows;
  }
  return pieces;
}

}  // namespace ct
