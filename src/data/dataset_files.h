// data.train or data.val opened as one dataset: its files (one, a list, or a glob's matches),
// every file's rows numbered one after another (data/row_space.h), and the schema they share.
#pragma once

#include <mpi.h>

#include <string>
#include <vector>

#include "data/dataset_schema.h"
#include "data/row_space.h"

namespace ct {

struct DatasetFiles {
  std::string key;                 // "data.train": for messages
  std::vector<DataField> fields;   // the datasets in every file
  std::vector<std::string> paths;  // in row order
  RowSpace space;
  DatasetSchema schema;  // rows: of all files together

  std::string Name() const;              // "'a.h5'", or "data.train's 4 files ('b-0.h5' ... 'b-3.h5')"
  std::string Where(int64_t row) const;  // global row `row`: "row 17 of 'b-1.h5'"
  // Global rows `rows`: "rows 3-9 of 'b-1.h5'", or "row 3 of 'b-1.h5' to row 9 of 'b-2.h5'".
  std::string Describe(RowRange rows) const;
};

// Collective over comm. Rank 0 alone expands `specs` and reads every file's metadata, with HDF5's
// POSIX driver (hundreds of files must not mean hundreds of metadata opens on every rank), checks
// each (ReadSchema) and that all hold the same datasets with rows of one shape and type, logs the
// file count and rows when there are several, and shares the result. A bad file: the same
// DataError or ConfigError, naming the file, on every rank.
DatasetFiles OpenDatasetFiles(const std::string& key, const std::vector<std::string>& specs,
                              const std::vector<DataField>& fields, MPI_Comm comm);

}  // namespace ct
