// The dataset contract checked on open: one numeric dataset per batch field (data.fields;
// float32, or converted to it as they are read), each with its own row shape, all with the same
// number of rows, at least one.
#pragma once

#include <string>
#include <vector>

#include "data/batch.h"
#include "data/h5_file.h"
#include "util/config.h"

namespace ct {

// A field, where its rows are stored, and their shape: [N, ...] and stored type.
struct FieldRows {
  std::string name;     // the batch's name for it: "input"
  std::string dataset;  // the HDF5 dataset: "strain"
  RowShape shape;
};

struct DatasetSchema {
  std::vector<FieldRows> fields;  // in data.fields order
  int64_t chunk_rows = 0;         // rows per chunk of the widest field's dataset; 0 if not chunked

  int64_t Rows() const { return fields.empty() ? 0 : fields[0].shape.Rows(); }
  void SetRows(int64_t rows);  // every field's dims[0]
  int64_t RowBytes() const;    // all fields of one row, as float32
  int64_t WidestRowBytes() const;
  std::vector<FieldDims> Dims() const;  // one row's shape per field
};

// Collective when `file` is. Throws DataError naming the file, the dataset and the fix (also for
// a virtual dataset whose source files are missing, or fields with different row counts).
DatasetSchema ReadSchema(const ParallelH5File& file, const std::vector<DataField>& fields);

// For the log: which datasets of `name` (DatasetFiles::Name) are stored in another type than
// float32 and converted, or "".
std::string ConversionNote(const DatasetSchema& schema, const std::string& name);

}  // namespace ct
