#include "data/dataset_files.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <sstream>

#include "cluster/gather_strings.h"
#include "data/h5_file.h"
#include "util/data_paths.h"
#include "util/error.h"

namespace ct {
namespace {

// What rank 0 read, as text for the broadcast: a line per file ("rows<TAB>path") after the
// schema's lines, or the error it met.
constexpr char kFailed[] = "error";

void WriteShape(std::ostream& out, const RowShape& shape) {
  out << shape.dtype;
  for (int64_t d : shape.dims) out << ' ' << d;
  out << '\n';
}

RowShape ReadShape(std::istream& in) {
  std::string line;
  std::getline(in, line);
  std::istringstream words(line);
  RowShape shape;
  words >> shape.dtype;
  for (int64_t d = 0; words >> d;) shape.dims.push_back(d);
  return shape;
}

std::string RowShapeText(const RowShape& shape) {
  std::vector<int64_t> row(shape.dims.begin() + 1, shape.dims.end());
  std::string text = "[";
  for (size_t i = 0; i < row.size(); ++i) text += (i ? ", " : "") + std::to_string(row[i]);
  return text + "] of " + shape.dtype;
}

// Every file's rows must be interchangeable with the first file's.
void CheckLike(const DatasetSchema& first, const std::string& first_path, const DatasetSchema& other,
               const std::string& path, const std::string& key) {
  auto same_rows = [](const RowShape& a, const RowShape& b) {
    return a.dtype == b.dtype && std::equal(a.dims.begin() + 1, a.dims.end(), b.dims.begin() + 1, b.dims.end());
  };
  for (size_t i = 0; i < first.fields.size(); ++i) {
    const RowShape& a = first.fields[i].shape;
    const RowShape& b = other.fields[i].shape;
    if (same_rows(a, b)) continue;
    throw DataError("'" + path + "': dataset '" + first.fields[i].dataset + "' has rows " + RowShapeText(b) + " but '" +
                    first_path + "' has rows " + RowShapeText(a) + "; every file of " + key +
                    " must hold rows of one shape and type: leave the odd file out of " + key + " or rewrite it");
  }
}

// Rank 0's part: the files, checked, as the broadcast's text.
std::string ReadAll(const std::string& key, const std::vector<std::string>& specs,
                    const std::vector<DataField>& fields) {
  const std::vector<std::string> paths = ExpandDataFiles(key, specs);
  std::ostringstream out;
  DatasetSchema first;
  std::vector<int64_t> rows;
  for (const std::string& path : paths) {
    const ParallelH5File file(path, ParallelH5File::Mode::kRead, MPI_COMM_NULL);
    const DatasetSchema schema = ReadSchema(file, fields);
    if (rows.empty()) {
      first = schema;
    } else {
      CheckLike(first, paths[0], schema, path, key);
    }
    rows.push_back(schema.Rows());
  }
  for (const FieldRows& f : first.fields) WriteShape(out, f.shape);
  out << first.chunk_rows << '\n';
  for (size_t i = 0; i < paths.size(); ++i) out << rows[i] << '\t' << paths[i] << '\n';
  return out.str();
}

}  // namespace

std::string DatasetFiles::Name() const {
  return paths.size() == 1 ? DescribeFiles(paths) : key + "'s " + DescribeFiles(paths);
}

std::string DatasetFiles::Where(int64_t row) const {
  const FilePiece at = space.Locate(row);
  return "row " + std::to_string(at.file_row) + " of '" + paths[at.file] + "'";
}

std::string DatasetFiles::Describe(RowRange rows) const {
  const FilePiece first = space.Locate(rows.begin);
  const FilePiece last = space.Locate(rows.end - 1);
  if (first.file == last.file) {
    return "rows " + std::to_string(first.file_row) + "-" + std::to_string(last.file_row) + " of '" +
           paths[first.file] + "'";
  }
  return Where(rows.begin) + " to " + Where(rows.end - 1);
}

DatasetFiles OpenDatasetFiles(const std::string& key, const std::vector<std::string>& specs,
                              const std::vector<DataField>& fields, MPI_Comm comm) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  std::string text;
  if (rank == 0) {
    try {
      text = ReadAll(key, specs, fields);
    } catch (const Error& e) {
      text = std::string(kFailed) + ' ' + std::to_string(e.ExitCode()) + '\n' + e.what();
    } catch (const std::exception& e) {
      text = std::string(kFailed) + ' ' + std::to_string(kExitFailure) + '\n' + ExceptionText(e);
    }
  }
  text = BroadcastString(comm, text, 0);
  std::istringstream in(text);
  if (text.rfind(kFailed, 0) == 0) {
    std::string word;
    int code = kExitFailure;
    in >> word >> code;
    const std::string message = text.substr(text.find('\n') + 1);
    if (code == kExitData) throw DataError(message);  // the type rank 0 met, for callers that catch it
    if (code == kExitUsage) throw ConfigError(message);
    throw Error(message, code);
  }
  DatasetFiles files;
  files.key = key;
  files.fields = fields;
  for (const DataField& f : fields) files.schema.fields.push_back({f.name, f.dataset, ReadShape(in)});
  std::string line;
  std::getline(in, line);
  files.schema.chunk_rows = std::stoll(line);
  std::vector<int64_t> rows;
  while (std::getline(in, line)) {
    const size_t tab = line.find('\t');
    rows.push_back(std::stoll(line.substr(0, tab)));
    files.paths.push_back(line.substr(tab + 1));
  }
  files.space = RowSpace(rows);
  files.schema.SetRows(files.space.Rows());
  if (rank == 0 && files.paths.size() > 1) {
    spdlog::info("data: {} is {}, {} rows together", key, DescribeFiles(files.paths), files.space.Rows());
  }
  return files;
}

}  // namespace ct
