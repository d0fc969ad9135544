#include "bench/io_bench.h"

#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <sstream>
#include <utility>
#include <vector>

#include "cluster/agree.h"
#include "cluster/mpi_check.h"
#include "data/block_stream.h"
#include "data/dataset_files.h"
#include "data/dataset_schema.h"
#include "data/h5_file.h"
#include "data/seed_layout.h"
#include "data/shard_loader.h"
#include "data/sharding.h"
#include "util/error.h"
#include "util/median.h"

namespace ct {
namespace {

// The files bench io reads: make-data's layout.
const std::vector<DataField> kInputAndTarget = {{"input", "input"}, {"target", "target"}};

using Clock = std::chrono::steady_clock;

// One timed variant: every rank runs `body` between barriers; returns this rank's (bytes, s).
struct Sample {
  double bytes = 0;
  double seconds = 0;
};

Sample Timed(MPI_Comm comm, const std::function<double()>& body) {
  MPI_CHECK(MPI_Barrier(comm));
  const auto start = Clock::now();
  const double bytes = body();
  return {bytes, std::chrono::duration<double>(Clock::now() - start).count()};
}

// Reads bytes [begin, end) of `path` with pread in 8 MiB pieces: into one reused 8 MiB buffer
// (as dd does), or, with `keep`, into new memory that holds all of them (as a loader must).
double PreadRange(const std::string& path, int64_t begin, int64_t end, bool keep) {
  const int fd = open(path.c_str(), O_RDONLY);
  if (fd < 0) throw DataError("bench io: cannot open '" + path + "': " + std::strerror(errno));
  constexpr int64_t kPiece = int64_t{8} << 20;
  // Not value-initialised: the first touch is the read itself, as in a loader.
  std::unique_ptr<char[]> buffer(new char[static_cast<size_t>(keep ? std::max<int64_t>(end - begin, 1) : kPiece)]);
  for (int64_t at = begin; at < end;) {
    char* into = buffer.get() + (keep ? at - begin : 0);
    const ssize_t got = pread(fd, into, std::min<int64_t>(end - at, kPiece), at);
    if (got <= 0) {
      close(fd);
      throw DataError("bench io: read of '" + path + "' failed at byte " + std::to_string(at));
    }
    at += got;
  }
  close(fd);
  return static_cast<double>(end - begin);
}

struct Row {
  std::string name;
  std::vector<double> per_rank_mbs;   // one per repeat: mean over ranks of this rank's MB/s
  std::vector<double> aggregate_mbs;  // one per repeat: all bytes / slowest rank's time
};

void Record(Row& row, const Sample& s, MPI_Comm comm, int world_size) {
  double rate = s.bytes / s.seconds / 1e6;
  double sums[2] = {rate, s.bytes};
  double slowest = s.seconds;
  MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, sums, 2, MPI_DOUBLE, MPI_SUM, comm));
  MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &slowest, 1, MPI_DOUBLE, MPI_MAX, comm));
  row.per_rank_mbs.push_back(sums[0] / world_size);
  row.aggregate_mbs.push_back(sums[1] / slowest / 1e6);
}

// One way of storing the rows, read as training reads them.
struct Form {
  std::string name;
  DatasetFiles files;
  std::unique_ptr<BlockStream> stream;
  Row static_row, blocks_row;
};

// "NAME=a.h5,b-*.h5" -> name and specs.
std::pair<std::string, std::vector<std::string>> ParseForm(const std::string& text) {
  const size_t eq = text.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == text.size()) {
    throw ConfigError("bench io --as '" + text + "': expected NAME=FILES, e.g. --as '8 files=data/bank-*.h5'");
  }
  std::vector<std::string> specs;
  std::stringstream list(text.substr(eq + 1));
  for (std::string spec; std::getline(list, spec, ',');) specs.push_back(spec);
  return {text.substr(0, eq), specs};
}

// The forms to compare (--as), the file itself first; none without --as. The streams come
// later: one each for the whole run, as in training, its buffers reused epoch after epoch.
std::vector<Form> OpenForms(const IoBenchOptions& o, const DatasetFiles& the_file, MPI_Comm comm) {
  std::vector<Form> forms;
  if (o.forms.empty()) return forms;
  forms.push_back({"one float32 file", the_file, {}, {}, {}});
  for (const std::string& text : o.forms) {
    auto [name, specs] = ParseForm(text);
    forms.push_back({name, OpenDatasetFiles("--as " + name, specs, kInputAndTarget, comm), {}, {}, {}});
    const DatasetSchema& schema = forms.back().files.schema;
    if (schema.fields[0].shape.dims != the_file.schema.fields[0].shape.dims) {
      throw ConfigError("bench io --as '" + text + "': " + forms.back().files.Name() +
                        " does not hold the same rows as '" + o.file + "' (" + schema.fields[0].shape.Str() + " vs " +
                        the_file.schema.fields[0].shape.Str() + ")");
    }
  }
  return forms;
}

std::unique_ptr<BlockStream> StreamOf(const DatasetFiles& files, int64_t batch, const MpiWorld& world) {
  BlockStreamOptions options;
  options.files = files;
  options.schema = files.schema;
  options.block_rows = AutoBlockRows(files.schema, world.Size());
  options.batch = batch;
  options.world_size = world.Size();
  options.rank = world.Rank();
  return std::make_unique<BlockStream>(options);
}

double StreamEpoch(BlockStream& stream, int64_t epoch, int64_t batch, int64_t row_bytes) {
  stream.StartEpoch(epoch, 0);
  for (int64_t b = 0; b < stream.BatchesPerEpoch(); ++b) stream.Next();
  return static_cast<double>(stream.BatchesPerEpoch() * batch * row_bytes);
}

// The second table: every form against the first (the float32 file).
// As ShardLoader::Load: the rank's slice of both fields into new memory, with collective reads.
// Returns the bytes read.
double ReadSliceCollectively(const std::string& path, const DatasetSchema& schema, RowRange slice, MPI_Comm comm) {
  const ParallelH5File file(path, ParallelH5File::Mode::kRead, comm);
  std::unique_ptr<float[]> input(new float[static_cast<size_t>(slice.Size() * schema.fields[0].shape.RowElements())]);
  std::unique_ptr<float[]> target(new float[static_cast<size_t>(slice.Size() * schema.fields[1].shape.RowElements())]);
  file.ReadRows("input", slice.begin, slice.Size(), input.get());
  file.ReadRows("target", slice.begin, slice.Size(), target.get());
  return static_cast<double>(slice.Size() * schema.RowBytes());
}

// As the seeds' Dataset: the slice one sample at a time from the seed layout. Returns the bytes read.
double ReadSliceBySample(SeedLayoutReader& seed, const DatasetSchema& schema, RowRange slice) {
  std::vector<float> input(static_cast<size_t>(schema.fields[0].shape.RowElements()));
  std::vector<float> target(static_cast<size_t>(schema.fields[1].shape.RowElements()));
  for (int64_t i = slice.begin; i < slice.end; ++i) {
    seed.Read(i, "input", input.data());
    seed.Read(i, "target", target.data());
  }
  return static_cast<double>(slice.Size() * schema.RowBytes());
}

// The table of the single-file reads, each against the page cache's two rates (rows 0 and 1).
void PrintRows(const std::vector<Row>& rows) {
  const double reused = Median(rows[0].aggregate_mbs);
  const double fresh = Median(rows[1].aggregate_mbs);
  fmt::print("| {:<28} | {:>13} | {:>14} | {:>15} | {:>18} |\n", "read", "per rank MB/s", "aggregate MB/s",
             "vs reused buffer", "vs into new memory");
  fmt::print("|{:-<30}|{:->15}|{:->16}|{:->17}|{:->20}|\n", "", ":", ":", ":", ":");
  for (const Row& row : rows) {
    const double aggregate = Median(row.aggregate_mbs);
    fmt::print("| {:<28} | {:>13.0f} | {:>14.0f} | {:>15.0f}% | {:>17.0f}% |\n", row.name, Median(row.per_rank_mbs),
               aggregate, 100 * aggregate / reused, 100 * aggregate / fresh);
  }
}

void PrintForms(const std::vector<Form>& forms) {
  fmt::print("\n| {:<28} | {:>11} | {:>9} | {:>11} | {:>9} |\n", "same rows as", "static MB/s", "vs file",
             "blocks MB/s", "vs file");
  fmt::print("|{:-<30}|{:->13}|{:->11}|{:->13}|{:->11}|\n", "", ":", ":", ":", ":");
  const double base_static = Median(forms[0].static_row.aggregate_mbs);
  const double base_blocks = Median(forms[0].blocks_row.aggregate_mbs);
  for (const Form& form : forms) {
    const double s = Median(form.static_row.aggregate_mbs);
    const double b = Median(form.blocks_row.aggregate_mbs);
    fmt::print("| {:<28} | {:>11.0f} | {:>8.0f}% | {:>11.0f} | {:>8.0f}% |\n", form.name, s, 100 * s / base_static, b,
               100 * b / base_blocks);
  }
}

}  // namespace

void RunIoBench(const IoBenchOptions& o, const MpiWorld& world) {
  const MPI_Comm comm = world.Comm();
  DatasetFiles the_file;
  RunAgreed(world, [&] { the_file = OpenDatasetFiles("the file", {o.file}, kInputAndTarget, comm); });
  const DatasetSchema& schema = the_file.schema;
  std::optional<SeedLayoutReader> seed;
  if (!o.seed_file.empty()) RunAgreed(world, [&] { seed.emplace(o.seed_file); });
  const int64_t file_bytes = static_cast<int64_t>(std::filesystem::file_size(o.file));
  const RowRange slice = RankSlice(schema.Rows(), world.Size(), world.Rank());
  const int64_t row_bytes = schema.RowBytes();

  // Warm-up: the whole file into the page cache, so that every variant reads from memory.
  PreadRange(o.file, 0, file_bytes, false);

  std::vector<Row> rows = {{"page cache, reused buffer", {}, {}},
                           {"page cache, into new memory", {}, {}},
                           {"static (MPI-IO, collective)", {}, {}},
                           {"blocks (reader thread)", {}, {}}};
  if (seed) rows.push_back({"seed layout (per sample)", {}, {}});
  std::vector<Form> forms;
  RunAgreed(world, [&] { forms = OpenForms(o, the_file, comm); });
  for (Form& form : forms) {
    form.stream = StreamOf(form.files, o.batch, world);
    StreamEpoch(*form.stream, o.repeats, o.batch, row_bytes);  // warm-up epoch, and the files into the cache
  }
  const std::unique_ptr<BlockStream> stream = StreamOf(the_file, o.batch, world);
  auto stream_epoch = [&](int64_t epoch) { return StreamEpoch(*stream, epoch, o.batch, row_bytes); };
  stream_epoch(o.repeats);  // warm-up epoch
  const int64_t my_bytes_begin = file_bytes * world.Rank() / world.Size();
  const int64_t my_bytes_end = file_bytes * (world.Rank() + 1) / world.Size();
  for (int repeat = 0; repeat < o.repeats; ++repeat) {
    Record(rows[0], Timed(comm, [&] { return PreadRange(o.file, my_bytes_begin, my_bytes_end, false); }), comm,
           world.Size());
    Record(rows[1], Timed(comm, [&] { return PreadRange(o.file, my_bytes_begin, my_bytes_end, true); }), comm,
           world.Size());
    Record(rows[2], Timed(comm, [&] { return ReadSliceCollectively(o.file, schema, slice, comm); }), comm,
           world.Size());
    Record(rows[3], Timed(comm, [&] { return stream_epoch(repeat); }), comm, world.Size());
    // Each round starts at another form, so that none always runs right after the same one.
    for (size_t i = 0; i < forms.size(); ++i) {
      Form& form = forms[(i + static_cast<size_t>(repeat)) % forms.size()];
      Record(form.static_row,
             Timed(comm,
                   [&] {
                     const ShardLoader loaded = ShardLoader::Load(form.files, comm, c10::Device(c10::kCPU));
                     return static_cast<double>(loaded.Rows() * row_bytes);
                   }),
             comm, world.Size());
      Record(form.blocks_row, Timed(comm, [&] { return StreamEpoch(*form.stream, repeat, o.batch, row_bytes); }), comm,
             world.Size());
    }
    if (seed) {
      Record(rows[4], Timed(comm, [&] { return ReadSliceBySample(*seed, schema, slice); }), comm, world.Size());
    }
  }
  if (world.Rank() != 0) return;
  fmt::print("bench io: {} ({} rows of {} bytes, {:.0f} MiB), {} rank(s), median of {} rounds\n", o.file, schema.Rows(),
             row_bytes, static_cast<double>(file_bytes) / (1 << 20), world.Size(), o.repeats);
  PrintRows(rows);
  if (!forms.empty()) PrintForms(forms);
}

}  // namespace ct
