#include "data/dataset_schema.h"

#include "util/error.h"

namespace ct {

DatasetSchema ReadSchema(const ParallelH5File& file, const std::string& input_key, const std::string& target_key) {
  DatasetSchema schema;
  schema.input = file.FloatRows(input_key);
  schema.target = file.FloatRows(target_key);
  const std::string& path = file.Path();
  if (schema.input.Rows() != schema.target.Rows()) {
    throw DataError("'" + path + "': dataset '" + input_key + "' has " + std::to_string(schema.input.Rows()) +
                    " rows but '" + target_key + "' has " + std::to_string(schema.target.Rows()) +
                    "; input and target must pair row by row");
  }
  if (schema.input.Rows() == 0) throw DataError("'" + path + "': dataset '" + input_key + "' has no rows");
  for (const std::string& key : {input_key, target_key}) {
    const std::vector<std::string> missing = file.MissingVirtualSources(key);
    if (missing.empty()) continue;
    std::string names;
    for (const std::string& name : missing) names += (names.empty() ? "" : ", ") + name;
    throw DataError("'" + path + "': virtual dataset '" + key + "' maps rows from files that do not exist: " + names +
                    " (looked for as given, beside the virtual dataset's file and under HDF5_VDS_PREFIX); HDF5 "
                    "would read their rows as zeros: put the files back, or rebuild the virtual dataset");
  }
  schema.chunk_rows = file.ChunkRows(input_key);
  return schema;
}

std::string ConversionNote(const DatasetSchema& schema, const std::string& name, const std::string& input_key,
                           const std::string& target_key) {
  std::string stored;
  if (schema.input.dtype != "float32") stored += "'" + input_key + "' as " + schema.input.dtype;
  if (schema.target.dtype != "float32") {
    stored += (stored.empty() ? "" : " and ") + std::string("'") + target_key + "' as " + schema.target.dtype;
  }
  if (stored.empty()) return "";
  return name + " stores " + stored + ": read collectively in that type, converted to float32 in memory";
}

}  // namespace ct
