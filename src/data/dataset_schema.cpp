#include "data/dataset_schema.h"

#include "util/error.h"

namespace ct {

void DatasetSchema::SetRows(int64_t rows) {
  for (FieldRows& f : fields) f.shape.dims[0] = rows;
}

int64_t DatasetSchema::RowBytes() const {
  int64_t bytes = 0;
  for (const FieldRows& f : fields) bytes += 4 * f.shape.RowElements();
  return bytes;
}

int64_t DatasetSchema::WidestRowBytes() const {
  int64_t bytes = 0;
  for (const FieldRows& f : fields) bytes = std::max(bytes, 4 * f.shape.RowElements());
  return bytes;
}

std::vector<FieldDims> DatasetSchema::Dims() const {
  std::vector<FieldDims> dims;
  for (const FieldRows& f : fields) dims.push_back({f.name, {f.shape.dims.begin() + 1, f.shape.dims.end()}});
  return dims;
}

DatasetSchema ReadSchema(const ParallelH5File& file, const std::vector<DataField>& fields) {
  DatasetSchema schema;
  const std::string& path = file.Path();
  const FieldRows* widest = nullptr;
  for (const DataField& field : fields) {
    schema.fields.push_back({field.name, field.dataset, file.FloatRows(field.dataset)});
    const FieldRows& added = schema.fields.back();
    const FieldRows& first = schema.fields.front();
    if (added.shape.Rows() != first.shape.Rows()) {
      throw DataError("'" + path + "': dataset '" + added.dataset + "' (field '" + added.name + "') has " +
                      std::to_string(added.shape.Rows()) + " rows but '" + first.dataset + "' (field '" + first.name +
                      "') has " + std::to_string(first.shape.Rows()) +
                      "; the fields of data.fields must pair row by row: give datasets with one row per sample each");
    }
  }
  if (schema.Rows() == 0) {
    throw DataError("'" + path + "': dataset '" + schema.fields[0].dataset + "' has no rows");
  }
  for (const FieldRows& f : schema.fields) {
    if (!widest || f.shape.RowElements() > widest->shape.RowElements()) widest = &f;
    const std::vector<std::string> missing = file.MissingVirtualSources(f.dataset);
    if (missing.empty()) continue;
    std::string names;
    for (const std::string& name : missing) names += (names.empty() ? "" : ", ") + name;
    throw DataError("'" + path + "': virtual dataset '" + f.dataset +
                    "' maps rows from files that do not exist: " + names +
                    " (looked for as given, beside the virtual dataset's file and under HDF5_VDS_PREFIX); HDF5 "
                    "would read their rows as zeros: put the files back, or rebuild the virtual dataset");
  }
  schema.chunk_rows = file.ChunkRows(widest->dataset);
  return schema;
}

std::string ConversionNote(const DatasetSchema& schema, const std::string& name) {
  std::string stored;
  for (const FieldRows& f : schema.fields) {
    if (f.shape.dtype != "float32") stored += (stored.empty() ? "'" : " and '") + f.dataset + "' as " + f.shape.dtype;
  }
  if (stored.empty()) return "";
  return name + " stores " + stored + ": read collectively in that type, converted to float32 in memory";
}

}  // namespace ct
