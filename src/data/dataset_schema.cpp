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
  schema.chunk_rows = file.ChunkRows(input_key);
  return schema;
}

}  // namespace ct
