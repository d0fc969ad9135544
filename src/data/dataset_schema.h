// The dataset contract checked on open: numeric `input` and `target` datasets (float32, or
// converted to it as they are read) with the same number of rows, at least one.
#pragma once

#include <string>

#include "data/h5_file.h"

namespace ct {

struct DatasetSchema {
  RowShape input;          // [N, ...]
  RowShape target;         // [N, ...]
  int64_t chunk_rows = 0;  // rows per chunk of the input dataset; 0 if not chunked

  int64_t Rows() const { return input.Rows(); }
  int64_t RowBytes() const { return 4 * (input.RowElements() + target.RowElements()); }
};

// Collective when `file` is. Throws DataError naming the file, the dataset and the fix (also for
// a virtual dataset whose source files are missing).
DatasetSchema ReadSchema(const ParallelH5File& file, const std::string& input_key, const std::string& target_key);

// For the log: which datasets of `name` (DatasetFiles::Name) are stored in another type than
// float32 and converted, or "".
std::string ConversionNote(const DatasetSchema& schema, const std::string& name, const std::string& input_key,
                           const std::string& target_key);

}  // namespace ct
