#include "data/seed_converter.h"

#include <c10/util/accumulate.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <optional>
#include <vector>

#include "cluster/agree.h"
#include "cluster/mpi_check.h"
#include "data/h5_file.h"
#include "data/seed_layout.h"
#include "data/sharding.h"
#include "util/atomic_file.h"
#include "util/error.h"
#include "util/unfinished_file.h"

namespace ct {
namespace {

using Clock = std::chrono::steady_clock;

// Rank 0's view of a pass over the samples: a line a second; its share stands for every rank's.
class PassProgress {
 public:
  PassProgress(bool show, std::string what, int64_t my_rows, int64_t total_rows, int64_t row_bytes)
      : show_(show), what_(std::move(what)), my_rows_(my_rows), total_rows_(total_rows), row_bytes_(row_bytes) {}

  void Advance(int64_t rows) {
    done_ += rows;
    if (!show_) return;
    const auto now = Clock::now();
    if (done_ < my_rows_ && now - last_ < std::chrono::seconds(1)) return;
    last_ = now;
    const double fraction = my_rows_ ? static_cast<double>(done_) / static_cast<double>(my_rows_) : 1.0;
    const double seconds = std::chrono::duration<double>(now - start_).count();
    const double rows_all = fraction * static_cast<double>(total_rows_);
    const std::string bar = std::string(static_cast<size_t>(20 * fraction), '#') +
                            std::string(20 - static_cast<size_t>(20 * fraction), '.');
    spdlog::info("convert: {:<16} [{}] {:5.1f}%  {:>9.0f}/{} samples  {:7.1f} MB/s", what_, bar, 100 * fraction,
                 rows_all, total_rows_, seconds > 0 ? rows_all * static_cast<double>(row_bytes_) / seconds / 1e6 : 0.0);
  }

 private:
  bool show_;
  std::string what_;
  int64_t my_rows_, total_rows_, row_bytes_;
  int64_t done_ = 0;
  Clock::time_point start_ = Clock::now();
  Clock::time_point last_ = start_;
};

void Write(const ConvertOptions& o, const SeedLayoutReader& seed, const std::string& path, const RowRange& slice,
           MPI_Comm comm, bool lead) {
  ParallelH5File out(path, ParallelH5File::Mode::kCreate, comm);
  for (const char* name : {"input", "target"}) {
    std::vector<int64_t> dims = name == std::string("input") ? seed.InputDims() : seed.TargetDims();
    dims.insert(dims.begin(), seed.Samples());
    out.CreateFloatRows(name, dims);
  }
  out.WriteAttribute("generator", "clustertrain convert");
  out.WriteAttribute("converted_from", o.seed_path);
  for (const char* name : {"input", "target"}) {
    const int64_t elements =
        c10::multiply_integers(name == std::string("input") ? seed.InputDims() : seed.TargetDims());
    PassProgress progress(lead && o.progress, std::string("writing ") + name, slice.Size(), seed.Samples(),
                          elements * 4);
    out.WriteRows(name, slice.begin, slice.Size(), [&](int64_t first, int64_t rows, float* buffer) {
      for (int64_t r = 0; r < rows; ++r) {
        seed.Read(first + r, name, buffer + r * elements);
        progress.Advance(1);
      }
    });
  }
  out.Close();
}

// Compares every sample of this rank's slice; returns the first differing sample or -1.
int64_t FirstDifference(const ConvertOptions& o, const SeedLayoutReader& seed, const std::string& path,
                        const RowRange& slice, MPI_Comm comm, bool lead, std::string& which) {
  const ParallelH5File out(path, ParallelH5File::Mode::kRead, comm);
  for (const char* name : {"input", "target"}) {
    const RowShape shape = out.FloatRows(name);
    std::vector<int64_t> expected = name == std::string("input") ? seed.InputDims() : seed.TargetDims();
    expected.insert(expected.begin(), seed.Samples());
    if (shape.dims != expected) {
      throw DataError("'" + path + "': dataset '" + name + "' has shape " + shape.Str() + " but the seed file holds " +
                      RowShape{expected}.Str() + "; convert again");
    }
  }
  int64_t first_bad = -1;
  for (const char* name : {"input", "target"}) {
    const int64_t elements =
        c10::multiply_integers(name == std::string("input") ? seed.InputDims() : seed.TargetDims());
    // Pieces of 1,024 rows, fewer for long rows: memory stays bounded whatever the row length.
    const int64_t piece_rows = std::clamp<int64_t>(ParallelH5File::kStagedPieceBytes / (elements * 4), 1, 1024);
    int64_t pieces = (slice.Size() + piece_rows - 1) / piece_rows;
    MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &pieces, 1, MPI_INT64_T, MPI_MAX, comm));
    std::vector<float> written(static_cast<size_t>(piece_rows * elements));
    std::vector<float> original(static_cast<size_t>(elements));
    PassProgress progress(lead && o.progress, std::string("verifying ") + name, slice.Size(), seed.Samples(),
                          elements * 4);
    for (int64_t p = 0; p < pieces; ++p) {  // the same number of collective reads on every rank
      const int64_t begin = std::min(slice.begin + p * piece_rows, slice.end);
      const int64_t rows = std::min(piece_rows, slice.end - begin);
      out.ReadRows(name, begin, rows, written.data());
      for (int64_t r = 0; r < rows && first_bad < 0; ++r) {
        seed.Read(begin + r, name, original.data());
        if (std::memcmp(original.data(), written.data() + r * elements, static_cast<size_t>(elements) * 4) != 0) {
          first_bad = begin + r;
          which = name;
        }
      }
      progress.Advance(rows);
    }
  }
  return first_bad;
}

}  // namespace

void ConvertSeedLayout(const ConvertOptions& o, const MpiWorld& world) {
  const MPI_Comm comm = world.Comm();
  const int rank = world.Rank(), size = world.Size();
  const bool lead = rank == 0;
  const auto start = Clock::now();
  std::optional<SeedLayoutReader> opened;
  RunAgreed(world, [&] { opened.emplace(o.seed_path); });  // a file every rank finds bad: one message
  const SeedLayoutReader& seed = *opened;
  const RowRange slice = RankSlice(seed.Samples(), size, rank);
  if (lead) {
    spdlog::info("convert: '{}' holds {} samples (input {} values, target {} values, stored as {}), {} ranks",
                 o.seed_path, seed.Samples(), c10::multiply_integers(seed.InputDims()),
                 c10::multiply_integers(seed.TargetDims()), seed.StoredType(), size);
  }
  if (!o.verify_only) {  // input and target as float32, refused before anything is written
    const double bytes =
        4.0 * static_cast<double>(seed.Samples()) *
        static_cast<double>(c10::multiply_integers(seed.InputDims()) + c10::multiply_integers(seed.TargetDims()));
    RunAgreed(world, [&] {
      if (const std::string problem = SpaceProblem(o.out_path, bytes); !problem.empty()) {
        throw DataError("convert: " + problem);
      }
    });
  }
  const std::string path = o.verify_only ? o.out_path : TemporaryPathFor(o.out_path);
  const UnfinishedFile unfinished(o.verify_only ? "" : path);  // until renamed: a stop signal removes it
  if (!o.verify_only) {
    WriteTemporaryOrRemoveIt("convert", o.out_path, lead, [&] { Write(o, seed, path, slice, comm, lead); });
  }
  if (o.verify || o.verify_only) {
    std::string which;
    int64_t mine = FirstDifference(o, seed, path, slice, comm, lead, which);
    int64_t first = mine < 0 ? seed.Samples() : mine;
    MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &first, 1, MPI_INT64_T, MPI_MIN, comm));
    if (first < seed.Samples()) {
      if (!o.verify_only) std::remove(path.c_str());  // nothing half-good under the real name
      throw DataError("verify: sample " + std::to_string(first) + " of '" + o.seed_path + "' differs from row " +
                          std::to_string(first) + " of '" + o.out_path + "'" +
                          (o.verify_only ? "; convert again with --force" : "; the output was not kept"),
                      /*agreed=*/true);
    }
    if (lead) spdlog::info("convert: verified all {} samples, input and target", seed.Samples());
  }
  MPI_CHECK(MPI_Barrier(comm));  // every rank has closed the file
  if (!o.verify_only && lead) CommitTemporaryFile(o.out_path);
  MPI_CHECK(MPI_Barrier(comm));
  if (lead && !o.verify_only) {
    spdlog::info("convert: wrote '{}' in {:.1f} s (datasets input, target; float32; chunked by rows)", o.out_path,
                 std::chrono::duration<double>(Clock::now() - start).count());
  }
}

}  // namespace ct
