#include "data/shard_loader.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstring>

#include "cluster/mpi_check.h"
#include "data/dataset_schema.h"
#include "data/row_file.h"
#include "data/row_memory.h"
#include "data/sharding.h"
#include "util/error.h"

namespace ct {

namespace {

// Whether all `elements` floats are finite. NaN and Inf are the floats whose exponent bits are
// all ones; tested on the bits, without branches, the loop vectorises (at::isfinite and friends
// ran the load at a quarter of the read's speed).
bool AllFinite(const float* values, int64_t elements) {
  uint32_t non_finite = 0;
  for (int64_t j = 0; j < elements; ++j) {
    uint32_t bits;
    std::memcpy(&bits, values + j, sizeof(bits));
    non_finite |= static_cast<uint32_t>((bits & 0x7f800000u) == 0x7f800000u);
  }
  return non_finite == 0;
}

// One check at load time, so that a NaN in the file is reported as such and not as a diverged
// loss epochs later. rows: the rows of one file from its row `first`.
void CheckFinite(const at::Tensor& rows, int64_t first, const std::string& path, const std::string& key) {
  if (rows.numel() == 0) return;  // a rank with no rows (fewer rows than ranks)
  const int64_t elements = rows.numel() / rows.size(0);
  const float* data = rows.data_ptr<float>();
  if (AllFinite(data, rows.numel())) return;
  int64_t bad = 0, first_bad = -1;
  for (int64_t i = 0; i < rows.size(0); ++i) {
    if (AllFinite(data + i * elements, elements)) continue;
    if (bad++ == 0) first_bad = i;
  }
  throw DataError("'" + path + "': dataset '" + key + "' has NaN or Inf values, first in row " +
                  std::to_string(first + first_bad) + " (" + std::to_string(bad) + " bad rows among rows " +
                  std::to_string(first) + "-" + std::to_string(first + rows.size(0) - 1) +
                  "); clean or drop those rows");
}

// A communicator of the ranks of `comm` whose static slices of `part` lie partly in file `file`:
// consecutive ranks, as slices are. Collective over those ranks alone (MPI_Comm_create_group),
// which every one of them reaches, as each visits its files in row order.
MPI_Comm ReadersOf(const RowSpace& space, size_t file, RowRange part, MPI_Comm comm) {
  int size = 1;
  MPI_Comm_size(comm, &size);
  const RowRange held{space.FirstRow(file), space.FirstRow(file) + space.FileRows(file)};
  int lowest = size, highest = -1;
  for (int r = 0; r < size; ++r) {
    const RowRange slice = RankSlice(part.Size(), size, r);
    if (std::max(slice.begin + part.begin, held.begin) >= std::min(slice.end + part.begin, held.end)) continue;
    lowest = std::min(lowest, r);
    highest = std::max(highest, r);
  }
  MPI_Group all, readers;
  MPI_Comm_group(comm, &all);
  int range[1][3] = {{lowest, highest, 1}};
  MPI_Group_range_incl(all, 1, range, &readers);
  MPI_Comm result = MPI_COMM_NULL;
  MPI_CHECK(MPI_Comm_create_group(comm, readers, static_cast<int>(file % 32768), &result));
  MPI_Group_free(&readers);
  MPI_Group_free(&all);
  return result;
}

}  // namespace

ShardLoader ShardLoader::Load(const DatasetFiles& files, MPI_Comm comm, const c10::Device& device, double val_fraction,
                              FilePart part) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  const RowRange rows = PartOf(files.space.Rows(), val_fraction, part);
  if (rows.Size() < 1) {
    throw DataError(files.Name() + " has " + std::to_string(files.space.Rows()) + " rows: too few to set aside " +
                    std::to_string(ValidationRows(files.space.Rows(), val_fraction)) +
                    " for validation (data.val_fraction) and train on the rest; lower data.val_fraction or give "
                    "data.val");
  }
  // Logged by the job's rank 0 alone: replicated sharding loads over MPI_COMM_SELF, where every rank is 0.
  int job_rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &job_rank);
  const std::string conversion = ConversionNote(files.schema, files.Name());
  if (job_rank == 0 && !conversion.empty()) spdlog::info("data: {}", conversion);
  RowRange slice = RankSlice(rows.Size(), size, rank);
  slice = {slice.begin + rows.begin, slice.end + rows.begin};  // global rows
  Batch held;
  for (const FieldRows& field : files.schema.fields) {
    held.names.push_back(field.name);
    // On 2 MiB pages: every batch gathers its rows from anywhere in them (data/row_memory.h).
    held.tensors.push_back(EmptyRows(field.shape.WithRows(slice.Size())));
  }
  uint32_t fallback = 0;
  // The files this rank's slice lies in, one at a time (memory stays flat in the number of
  // files), each opened collectively by the ranks whose slices lie in it alone: the ranks read
  // their files in parallel, and none opens a file it reads nothing from.
  for (const FilePiece& piece : files.space.Pieces(slice)) {
    const int64_t at = files.space.FirstRow(piece.file) + piece.file_row - slice.begin;
    const std::string& path = files.paths[piece.file];
    MPI_Comm readers = ReadersOf(files.space, piece.file, rows, comm);
    bool is_virtual = false;
    {
      // Collective over `readers` from open to close. What can fail here fails on all of them
      // alike (the file's metadata), so none leaves a collective its peers are still in.
      const std::unique_ptr<RowFile> file = OpenRowFile(path, readers);
      // Parallel HDF5 cannot read a virtual dataset collectively: each rank reads its rows itself.
      for (const FieldRows& field : files.schema.fields) is_virtual = is_virtual || file->ReadsAlone(field.dataset);
      if (!is_virtual) {
        ReadPiece(*file, files.schema, piece, at, held.tensors);
        fallback |= file->CollectiveFallbackCause();
      }
    }
    MPI_Comm_free(&readers);
    if (is_virtual) {
      ReadPiece(*OpenRowFile(path, MPI_COMM_NULL), files.schema, piece, at, held.tensors);
    }
  }
  MPI_Allreduce(MPI_IN_PLACE, &fallback, 1, MPI_UINT32_T, MPI_BOR, comm);
  if (fallback != 0 && rank == 0) {
    spdlog::warn(
        "reading {}: HDF5 fell back from collective to independent I/O (H5D_MPIO cause bits {:#x}); reads still "
        "work, but slower on a parallel file system",
        files.Name(), fallback);
  }
  // This rank's rows alone: after the collective part, since it can fail on some ranks only.
  for (const FilePiece& piece : files.space.Pieces(slice)) {
    const int64_t at = files.space.FirstRow(piece.file) + piece.file_row - slice.begin;
    for (size_t i = 0; i < files.schema.fields.size(); ++i) {
      CheckFinite(held.tensors[i].narrow(0, at, piece.rows), piece.file_row, files.paths[piece.file],
                  files.schema.fields[i].dataset);
    }
  }
  return ShardLoader(held.Map([&](const at::Tensor& t) { return t.to(device); }), rows.Size());
}

ShardLoader ShardLoader::Load(const std::string& path, const std::vector<DataField>& fields, MPI_Comm comm,
                              const c10::Device& device) {
  return Load(OpenDatasetFiles("the file", {path}, fields, comm), comm, device);
}

ShardLoader::ShardLoader(Batch rows, int64_t total_rows) : rows_(std::move(rows)), total_rows_(total_rows) {
  order_ = at::arange(Rows(), at::TensorOptions().dtype(at::kLong).device(rows_.tensors[0].device()));
}

std::vector<FieldDims> ShardLoader::Fields() const {
  std::vector<FieldDims> fields;
  for (size_t i = 0; i < rows_.names.size(); ++i) {
    fields.push_back({rows_.names[i], rows_.tensors[i].sizes().slice(1).vec()});
  }
  return fields;
}

int64_t ShardLoader::Bytes() const {
  int64_t elements = 0;
  for (const at::Tensor& t : rows_.tensors) elements += t.numel();
  return elements * 4;
}

void ShardLoader::Shuffle(uint64_t seed, int64_t epoch, int rank) {
  std::vector<int64_t> order = EpochPermutation(Rows(), seed, epoch, rank);
  order_ = at::from_blob(order.data(), {Rows()}, at::kLong)
               .to(rows_.tensors[0].device(), /*non_blocking=*/false, /*copy=*/true);
}

Batch ShardLoader::ShuffledBatch(int64_t step, int64_t batch) const {
  const at::Tensor index = order_.narrow(0, step * batch, batch);
  return rows_.Map([&](const at::Tensor& t) { return t.index_select(0, index); });
}

Batch ShardLoader::Rows(int64_t begin, int64_t count) const {
  return rows_.Map([&](const at::Tensor& t) { return t.narrow(0, begin, count); });
}

StaticBatches::StaticBatches(ShardLoader rows, int64_t batch, uint64_t seed, int world_size, int rank, bool replicated)
    : rows_(std::move(rows)),
      batch_(batch),
      seed_(seed),
      rank_(rank),
      world_size_(world_size),
      replicated_(replicated),
      batches_(StepsPerEpoch(rows_.TotalRows(), world_size, batch)) {}

std::string StaticBatches::Describe() const {
  if (replicated_) {
    return "replicated: all " + std::to_string(rows_.Rows()) + " rows (" + std::to_string(rows_.Bytes() >> 20) +
           " MiB) in memory on each rank, one permutation per epoch shared by the ranks, each taking its part of "
           "every global batch";
  }
  return "static: " + std::to_string(rows_.Rows()) + " rows (" + std::to_string(rows_.Bytes() >> 20) +
         " MiB) in memory on each rank, reshuffled every epoch";
}

void StaticBatches::StartEpoch(int64_t epoch, int64_t first_batch) {
  rows_.Shuffle(seed_, epoch, replicated_ ? 0 : rank_);
  next_ = first_batch;
}

Batch StaticBatches::Next() {
  const int64_t step = next_++;
  return rows_.ShuffledBatch(replicated_ ? step * world_size_ + rank_ : step, batch_);
}

}  // namespace ct
