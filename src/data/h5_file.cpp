#include "data/h5_file.h"

#include <c10/util/Half.h>

#include <algorithm>
#include <cstdlib>
#include <exception>
#include <filesystem>

#include "cluster/mpi_check.h"
#include "data/file_identity.h"
#include "util/heartbeat.h"
#include "util/logging.h"

namespace ct {
namespace {

std::map<std::string, std::string>& MpiIoHints() {
  static std::map<std::string, std::string> hints;
  return hints;
}

H5Id FileAccess(MPI_Comm comm) {
  H5Id fapl(H5_CHECK(H5Pcreate(H5P_FILE_ACCESS)), H5Pclose);
  if (comm == MPI_COMM_NULL) return fapl;  // this process alone: HDF5's POSIX driver, no MPI call
  MPI_Info info = MPI_INFO_NULL;
  if (!MpiIoHints().empty()) {
    MPI_CHECK(MPI_Info_create(&info));
    for (const auto& [name, value] : MpiIoHints()) MPI_CHECK(MPI_Info_set(info, name.c_str(), value.c_str()));
  }
  const herr_t set = H5Pset_fapl_mpio(fapl.get(), comm, info);  // HDF5 keeps its own copy of info
  if (info != MPI_INFO_NULL) MPI_Info_free(&info);
  H5_CHECK(set);
  // Metadata is read once by one rank and broadcast, instead of by every rank.
  H5_CHECK(H5Pset_all_coll_metadata_ops(fapl.get(), true));
  H5_CHECK(H5Pset_coll_metadata_write(fapl.get(), true));
  return fapl;
}

H5Id Transfer(MPI_Comm comm) {
  H5Id dxpl(H5_CHECK(H5Pcreate(H5P_DATASET_XFER)), H5Pclose);
  if (comm != MPI_COMM_NULL) H5_CHECK(H5Pset_dxpl_mpio(dxpl.get(), H5FD_MPIO_COLLECTIVE));
  return dxpl;
}

// Selects rows [start, start+count) of a dataspace of shape dims (count 0: none).
void SelectRows(hid_t space, const std::vector<hsize_t>& dims, int64_t start, int64_t count) {
  if (count == 0) {
    H5_CHECK(H5Sselect_none(space));
    return;
  }
  std::vector<hsize_t> offset(dims.size(), 0), extent(dims);
  offset[0] = static_cast<hsize_t>(start);
  extent[0] = static_cast<hsize_t>(count);
  H5_CHECK(H5Sselect_hyperslab(space, H5S_SELECT_SET, offset.data(), nullptr, extent.data(), nullptr));
}

std::vector<hsize_t> Dims(hid_t dataset) {
  H5Id space(H5_CHECK(H5Dget_space(dataset)), H5Sclose);
  int rank = H5_CHECK(H5Sget_simple_extent_ndims(space.get()));
  std::vector<hsize_t> dims(static_cast<size_t>(rank));
  H5_CHECK(H5Sget_simple_extent_dims(space.get(), dims.data(), nullptr));
  return dims;
}

// Runs body(piece_start, piece_count) over [start, start+count) in pieces of piece_rows,
// the same number of times on every rank.
template <class Body>
void ForEachPiece(MPI_Comm comm, int64_t start, int64_t count, int64_t piece_rows, Body body) {
  int64_t pieces = (count + piece_rows - 1) / piece_rows;
  if (comm != MPI_COMM_NULL) MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &pieces, 1, MPI_INT64_T, MPI_MAX, comm));
  for (int64_t i = 0; i < pieces; ++i) {
    const int64_t first = std::min(i * piece_rows, count);
    body(start + first, std::min(piece_rows, count - first));
  }
}

// How a dataset's values are stored and brought to float32: read into memory in the stored type
// itself (the dataset's type in this machine's byte order, so HDF5 converts nothing), then
// converted by `convert`. float32 needs no conversion.
struct StoredType {
  H5Id memory_type;
  size_t bytes = 4;
  bool is_float32 = true;
  void (*convert)(const void* in, int64_t n, float* out) = nullptr;
};

template <class T>
void ConvertToFloat(const void* in, int64_t n, float* out) {
  const T* values = static_cast<const T*>(in);
  for (int64_t i = 0; i < n; ++i) out[i] = static_cast<float>(values[i]);
}

StoredType StoredTypeOf(hid_t dataset) {
  H5Id type(H5_CHECK(H5Dget_type(dataset)), H5Tclose);
  StoredType stored;
  stored.bytes = H5Tget_size(type.get());
  const bool is_float = H5Tget_class(type.get()) == H5T_FLOAT;
  const bool is_signed = H5Tget_sign(type.get()) != H5T_SGN_NONE;
  stored.is_float32 = is_float && stored.bytes == 4;
  if (stored.is_float32) {
    stored.memory_type = H5Id(H5_CHECK(H5Tcopy(H5T_NATIVE_FLOAT)), H5Tclose);
    return stored;
  }
  // float16 has no native C type: the file's own type in this machine's byte order.
  stored.memory_type = H5Id(H5_CHECK(H5Tcopy(type.get())), H5Tclose);
  H5_CHECK(H5Tset_order(stored.memory_type.get(), H5Tget_order(H5T_NATIVE_INT)));
  if (is_float) {
    stored.convert = stored.bytes == 8 ? ConvertToFloat<double> : ConvertToFloat<c10::Half>;
    return stored;
  }
  switch (stored.bytes) {
    case 1:
      stored.convert = is_signed ? ConvertToFloat<int8_t> : ConvertToFloat<uint8_t>;
      break;
    case 2:
      stored.convert = is_signed ? ConvertToFloat<int16_t> : ConvertToFloat<uint16_t>;
      break;
    case 4:
      stored.convert = is_signed ? ConvertToFloat<int32_t> : ConvertToFloat<uint32_t>;
      break;
    default:
      stored.convert = is_signed ? ConvertToFloat<int64_t> : ConvertToFloat<uint64_t>;
      break;
  }
  return stored;
}

int64_t PieceRows(int64_t row_elements, int64_t piece_bytes) {
  return std::max<int64_t>(1, piece_bytes / (row_elements * 4));
}

}  // namespace

void ParallelH5File::SetMpiIoHints(const std::map<std::string, std::string>& hints) { MpiIoHints() = hints; }

int64_t RowShape::RowElements() const {
  int64_t n = 1;
  for (size_t i = 1; i < dims.size(); ++i) n *= dims[i];
  return n;
}

std::vector<int64_t> RowShape::WithRows(int64_t rows) const {
  std::vector<int64_t> result = dims;
  result[0] = rows;
  return result;
}

std::string RowShape::Str() const {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? ", " : "") + std::to_string(dims[i]);
  return s + "]";
}

int64_t ChunkRowsFor(int64_t row_bytes, int64_t rows) {
  constexpr int64_t kTargetChunkBytes = int64_t{2} << 20;
  return std::clamp<int64_t>(kTargetChunkBytes / std::max<int64_t>(row_bytes, 1), 1, std::max<int64_t>(rows, 1));
}

void ParallelH5File::NoteCollectiveCause(hid_t dxpl) const {
  uint32_t local_cause = 0, global_cause = 0;
  H5_CHECK(H5Pget_mpio_no_collective_cause(dxpl, &local_cause, &global_cause));
  if (global_cause != H5D_MPIO_COLLECTIVE) independent_fallback_ = global_cause;
}

int64_t ParallelH5File::ChunkRows(const std::string& name) const {
  H5Id dataset = OpenDataset(name);
  H5Id dcpl(H5_CHECK(H5Dget_create_plist(dataset.get())), H5Pclose);
  if (H5Pget_layout(dcpl.get()) != H5D_CHUNKED) return 0;
  const std::vector<hsize_t> dims = Dims(dataset.get());
  std::vector<hsize_t> chunk(dims.size());
  H5_CHECK(H5Pget_chunk(dcpl.get(), static_cast<int>(chunk.size()), chunk.data()));
  return static_cast<int64_t>(chunk[0]);
}

ParallelH5File::ParallelH5File(const std::string& path, Mode mode, MPI_Comm comm)
    : path_(path), comm_(comm), writing_(mode == Mode::kCreate) {
  SetUpHdf5();
  // Before HDF5's collective open: ranks that see different files would deadlock in it.
  if (mode == Mode::kRead && comm != MPI_COMM_NULL) AgreeOnFileIdentity(path, comm);
  H5Id fapl = FileAccess(comm);
  hid_t id = mode == Mode::kRead ? H5Fopen(path.c_str(), H5F_ACC_RDONLY, fapl.get())
                                 : H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl.get());
  if (id < 0) {
    const std::string stack = TakeHdf5ErrorStack();
    if (mode == Mode::kCreate) {
      throw DataError("cannot create HDF5 file '" + path + "': " + stack +
                      "; check that its directory exists and is writable from every node");
    }
    throw DataError("cannot open '" + path + "' as an HDF5 file: " + stack + "; " + OpenFailureAdvice(stack));
  }
  file_ = H5Id(id, H5Fclose);
}

ParallelH5File::~ParallelH5File() {
  if (writing_ && file_.get() >= 0 && std::uncaught_exceptions() > 0) NoteHdf5WriteLeftOpen();  // data/h5_check.h: why
}

void ParallelH5File::Close() {
  read_datasets_.clear();
  const hid_t id = file_.Release();
  if (id >= 0 && H5Fclose(id) < 0) {
    NoteHdf5WriteLeftOpen();
    throw DataError("closing '" + path_ + "' failed: " + TakeHdf5ErrorStack());
  }
}

bool ParallelH5File::HasDataset(const std::string& name) const {
  const htri_t exists = H5Lexists(file_.get(), name.c_str(), H5P_DEFAULT);
  if (exists < 0) H5Eclear2(H5E_DEFAULT);
  return exists > 0;
}

H5Id ParallelH5File::OpenDataset(const std::string& name) const {
  htri_t exists = H5Lexists(file_.get(), name.c_str(), H5P_DEFAULT);
  if (exists <= 0) {
    H5Eclear2(H5E_DEFAULT);
    throw DataError("HDF5 file '" + path_ + "' has no dataset '" + name + "'; `clustertrain info " + path_ +
                    "` lists its datasets; map the batch fields to datasets it has (data.fields, or data.input_key / "
                    "data.target_key), or convert a one-group-per-sample file with `clustertrain convert`");
  }
  hid_t id = H5Dopen2(file_.get(), name.c_str(), H5P_DEFAULT);
  if (id < 0) {
    throw DataError("'" + name + "' in HDF5 file '" + path_ + "' is not a dataset (a group?): " + TakeHdf5ErrorStack());
  }
  return H5Id(id, H5Dclose);
}

RowShape ParallelH5File::FloatRows(const std::string& name) const {
  H5Id dataset = OpenDataset(name);
  H5Id type(H5_CHECK(H5Dget_type(dataset.get())), H5Tclose);
  const H5T_class_t kind = H5Tget_class(type.get());
  if (kind != H5T_FLOAT && kind != H5T_INTEGER) {
    throw DataError("dataset '" + name + "' in '" + path_ + "' has dtype " + Hdf5TypeName(type.get()) +
                    "; clustertrain reads numbers (float16/32/64 or integers, converted to float32 as they are "
                    "read): store the rows as numbers, e.g. in h5py f.create_dataset(name, data=x.astype('float32'))");
  }
  H5Id dcpl(H5_CHECK(H5Dget_create_plist(dataset.get())), H5Pclose);
  const std::vector<std::string> missing = MissingFilters(dcpl.get());
  if (!missing.empty()) {
    throw DataError("dataset '" + name + "' in '" + path_ + "' is stored with " +
                    fmt::format("{}", fmt::join(missing, ", ")) + ": " + MissingFilterAdvice(missing));
  }
  RowShape shape;
  shape.dtype = Hdf5TypeName(type.get());
  for (hsize_t d : Dims(dataset.get())) shape.dims.push_back(static_cast<int64_t>(d));
  if (shape.dims.empty())
    throw DataError("dataset '" + name + "' in '" + path_ + "' is a scalar; expected rows [N, ...]");
  if (shape.dims.size() > 1 && shape.RowElements() == 0) {
    throw DataError("dataset '" + name + "' in '" + path_ + "' has shape " + shape.Str() +
                    ": its rows hold no values; write rows of at least one value each");
  }
  return shape;
}

std::vector<std::string> ParallelH5File::MissingVirtualSources(const std::string& name) const {
  namespace fs = std::filesystem;
  H5Id dataset = OpenDataset(name);
  H5Id dcpl(H5_CHECK(H5Dget_create_plist(dataset.get())), H5Pclose);
  std::vector<std::string> missing;
  if (H5Pget_layout(dcpl.get()) != H5D_VIRTUAL) return missing;
  size_t count = 0;
  H5_CHECK(H5Pget_virtual_count(dcpl.get(), &count));
  const char* prefix = std::getenv("HDF5_VDS_PREFIX");
  for (size_t i = 0; i < count; ++i) {
    char source[4096] = {0};
    if (H5Pget_virtual_filename(dcpl.get(), i, source, sizeof(source)) < 0) continue;
    const fs::path file(source);
    // "." is the virtual dataset's own file.
    if (file == "." || std::find(missing.begin(), missing.end(), source) != missing.end()) continue;
    // Where HDF5 looks for a relative name: as given, beside the VDS file, under HDF5_VDS_PREFIX.
    std::vector<fs::path> places = {file};
    if (file.is_relative()) {
      places.push_back(fs::path(path_).parent_path() / file);
      if (prefix) places.push_back(fs::path(prefix) / file);
    }
    std::error_code ec;
    if (std::none_of(places.begin(), places.end(), [&](const fs::path& p) { return fs::is_regular_file(p, ec); }))
      missing.push_back(source);
  }
  return missing;
}

bool ParallelH5File::IsVirtual(const std::string& name) const {
  H5Id dataset = OpenDataset(name);
  H5Id dcpl(H5_CHECK(H5Dget_create_plist(dataset.get())), H5Pclose);
  return H5Pget_layout(dcpl.get()) == H5D_VIRTUAL;
}

hid_t ParallelH5File::ReadDataset(const std::string& name) const {
  auto it = read_datasets_.find(name);
  if (it == read_datasets_.end()) it = read_datasets_.emplace(name, OpenDataset(name)).first;
  return it->second.get();
}

void ParallelH5File::ReadRows(const std::string& name, int64_t start, int64_t count, float* out) const {
  const hid_t dataset = ReadDataset(name);
  const std::vector<hsize_t> dims = Dims(dataset);
  const RowShape shape{std::vector<int64_t>(dims.begin(), dims.end())};
  if (start < 0 || count < 0 || start + count > shape.Rows()) {
    throw DataError("rows [" + std::to_string(start) + ", " + std::to_string(start + count) +
                    ") are outside dataset '" + name + "' of '" + path_ + "' with " + std::to_string(shape.Rows()) +
                    " rows");
  }
  H5Id file_space(H5_CHECK(H5Dget_space(dataset)), H5Sclose);
  H5Id dxpl = Transfer(comm_);
  const int64_t row_elements = shape.RowElements();
  // Rows stored as float32 go straight into `out`. Others are read in their own type (so that
  // HDF5 does no type conversion, which would turn collective reads into independent ones)
  // into a staging buffer, piece by piece, and converted here.
  const StoredType stored = StoredTypeOf(dataset);
  const bool staged = !stored.is_float32;
  const int64_t piece_rows =
      staged ? std::min(PieceRows(row_elements * stored.bytes / 4, kConvertPieceBytes), std::max<int64_t>(count, 1))
             : PieceRows(row_elements, kMaxPieceBytes);
  // Kept between calls: a fresh buffer per block read costs a page fault per page.
  if (staged) staging_.resize(std::max(staging_.size(), static_cast<size_t>(piece_rows * row_elements * stored.bytes)));
  ForEachPiece(comm_, start, count, piece_rows, [&](int64_t first, int64_t rows) {
    std::vector<hsize_t> piece_dims(dims);
    piece_dims[0] = static_cast<hsize_t>(std::max<int64_t>(rows, 1));
    H5Id memory_space(H5_CHECK(H5Screate_simple(static_cast<int>(dims.size()), piece_dims.data(), nullptr)), H5Sclose);
    SelectRows(memory_space.get(), piece_dims, 0, rows);
    SelectRows(file_space.get(), dims, first, rows);
    float* target = out + (first - start) * row_elements;
    void* buffer = staged ? static_cast<void*>(staging_.data()) : static_cast<void*>(target);
    if (H5Dread(dataset, stored.memory_type.get(), memory_space.get(), file_space.get(), dxpl.get(), buffer) < 0) {
      throw DataError("cannot read rows " + std::to_string(first) + "-" + std::to_string(first + rows - 1) +
                      " of dataset '" + name + "' in '" + path_ + "': " + TakeHdf5ErrorStack() +
                      "; check that the file is complete and readable on every node (`clustertrain info " + path_ +
                      "` reads its layout)");
    }
    if (staged) stored.convert(staging_.data(), rows * row_elements, target);
    if (comm_ != MPI_COMM_NULL) NoteCollectiveCause(dxpl.get());
    if (comm_ != MPI_COMM_NULL) Heartbeat();  // a long collective read is progress (util/heartbeat.h)
  });
}

void ParallelH5File::CreateFloatRows(const std::string& name, const std::vector<int64_t>& dims) {
  std::vector<hsize_t> extent(dims.begin(), dims.end());
  std::vector<hsize_t> chunk(extent);
  const RowShape shape{dims};
  chunk[0] = static_cast<hsize_t>(ChunkRowsFor(shape.RowElements() * 4, shape.Rows()));
  H5Id space(H5_CHECK(H5Screate_simple(static_cast<int>(extent.size()), extent.data(), nullptr)), H5Sclose);
  H5Id dcpl(H5_CHECK(H5Pcreate(H5P_DATASET_CREATE)), H5Pclose);
  H5_CHECK(H5Pset_chunk(dcpl.get(), static_cast<int>(chunk.size()), chunk.data()));
  H5Id dataset(H5_CHECK(H5Dcreate2(file_.get(), name.c_str(), H5T_IEEE_F32LE, space.get(), H5P_DEFAULT, dcpl.get(),
                                   H5P_DEFAULT)),
               H5Dclose);
}

void ParallelH5File::WriteRows(const std::string& name, int64_t start, int64_t count, const Fill& fill) {
  H5Id dataset = OpenDataset(name);
  const std::vector<hsize_t> dims = Dims(dataset.get());
  const RowShape shape{std::vector<int64_t>(dims.begin(), dims.end())};
  H5Id file_space(H5_CHECK(H5Dget_space(dataset.get())), H5Sclose);
  H5Id dxpl = Transfer(comm_);
  const int64_t row_elements = shape.RowElements();
  const int64_t piece_rows = std::min(PieceRows(row_elements, kStagedPieceBytes), std::max<int64_t>(count, 1));
  std::vector<float> buffer(static_cast<size_t>(piece_rows * row_elements));
  ForEachPiece(comm_, start, count, piece_rows, [&](int64_t first, int64_t rows) {
    if (rows > 0) fill(first, rows, buffer.data());
    std::vector<hsize_t> piece_dims(dims);
    piece_dims[0] = static_cast<hsize_t>(piece_rows);
    H5Id memory_space(H5_CHECK(H5Screate_simple(static_cast<int>(dims.size()), piece_dims.data(), nullptr)), H5Sclose);
    SelectRows(memory_space.get(), piece_dims, 0, rows);
    SelectRows(file_space.get(), dims, first, rows);
    H5_CHECK(
        H5Dwrite(dataset.get(), H5T_NATIVE_FLOAT, memory_space.get(), file_space.get(), dxpl.get(), buffer.data()));
  });
}

void ParallelH5File::WriteAttribute(const std::string& name, const std::string& value) {
  H5Id type(H5_CHECK(H5Tcopy(H5T_C_S1)), H5Tclose);
  H5_CHECK(H5Tset_size(type.get(), std::max<size_t>(value.size(), 1)));
  H5Id space(H5_CHECK(H5Screate(H5S_SCALAR)), H5Sclose);
  H5Id attribute(H5_CHECK(H5Acreate2(file_.get(), name.c_str(), type.get(), space.get(), H5P_DEFAULT, H5P_DEFAULT)),
                 H5Aclose);
  H5_CHECK(H5Awrite(attribute.get(), type.get(), value.c_str()));
}

}  // namespace ct
