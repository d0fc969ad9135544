#include "data/row_file.h"

#include <ATen/ATen.h>

#include "data/dataset_schema.h"
#include "data/h5_file.h"

namespace ct {

std::unique_ptr<RowFile> OpenRowFile(const std::string& path, MPI_Comm comm) {
  return std::make_unique<ParallelH5File>(path, ParallelH5File::Mode::kRead, comm);
}

void ReadPiece(const RowFile& file, const DatasetSchema& schema, const FilePiece& piece, int64_t at,
               const std::vector<at::Tensor>& rows) {
  for (size_t i = 0; i < schema.fields.size(); ++i) {
    const FieldRows& field = schema.fields[i];
    file.ReadRows(field.dataset, piece.file_row, piece.rows,
                  rows[i].data_ptr<float>() + at * field.shape.RowElements());
  }
}

}  // namespace ct
