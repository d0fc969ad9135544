#include "data/block_stream.h"

#include <c10/core/DeviceGuard.h>
#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <exception>
#include <list>
#include <mutex>
#include <optional>

#include "data/row_file.h"
#include "data/row_memory.h"
#include "util/error.h"
#include "util/trace.h"

namespace ct {

struct BlockStream::Shared {
  std::mutex mutex;
  std::condition_variable changed;
  uint64_t generation = 0;  // bumped by every StartEpoch
  bool requested = false;   // an epoch is asked for and the reader has not taken it yet
  int64_t epoch = 0;
  int64_t first_batch = 0;
  std::deque<Batch> ready;
  std::exception_ptr error;
  bool stop = false;
  bool exited = false;
};

namespace {

using Shared = BlockStream::Shared;

constexpr size_t kOpenFiles = 4;  // file handles a reader keeps open

// What the file was when the reader opened it: a file deleted, replaced or truncated during
// training is an error, not zeros (HDF5's POSIX driver reads past the end of a file as zeros).
struct FileIdentity {
  dev_t device = 0;
  ino_t inode = 0;
  off_t size = 0;
};

FileIdentity Identify(const std::string& path) {
  struct stat info {};
  if (stat(path.c_str(), &info) != 0) {
    throw DataError("cannot stat '" + path + "': " + std::strerror(errno));
  }
  return {info.st_dev, info.st_ino, info.st_size};
}

void CheckUnchanged(const std::string& path, const FileIdentity& opened, int64_t epoch) {
  const std::string when = " during training (epoch " + std::to_string(epoch + 1) + ")";
  const std::string fix = "; data.sharding=blocks reads it every epoch: restore it and resume with --resume auto";
  struct stat info {};
  if (stat(path.c_str(), &info) != 0) {
    throw DataError("training file '" + path + "' vanished" + when + ": " + std::strerror(errno) + fix);
  }
  if (info.st_dev != opened.device || info.st_ino != opened.inode) {
    throw DataError("training file '" + path + "' was replaced by another file" + when + fix);
  }
  if (info.st_size < opened.size) {
    throw DataError("training file '" + path + "' was truncated from " + std::to_string(opened.size) + " to " +
                    std::to_string(info.st_size) + " bytes" + when + fix);
  }
}

// Copies `elements` floats and says whether all were finite. NaN and Inf are the floats whose
// exponent bits are all ones; tested on the bits, the loop vectorises (std::isfinite did not).
bool CopyRowIfFinite(const float* from, float* to, int64_t elements) {
  uint32_t non_finite = 0;
  for (int64_t j = 0; j < elements; ++j) {
    uint32_t bits;
    std::memcpy(&bits, from + j, sizeof(bits));  // a load, without aliasing UB
    std::memcpy(to + j, &bits, sizeof(bits));
    non_finite |= static_cast<uint32_t>((bits & 0x7f800000u) == 0x7f800000u);
  }
  return non_finite == 0;
}

// The reader thread's side of the protocol in block_stream.h.
class Reader {
 public:
  Reader(std::shared_ptr<Shared> shared, BlockStreamOptions options, int64_t batches)
      : shared_(std::move(shared)),
        o_(std::move(options)),
        plan_{o_.schema.Rows(), o_.block_rows},
        batches_(batches),
        identities_(o_.files.paths.size()) {}

  void Run() {
    trace::NameThisThread("block reader");
    try {
      // Pinned batches are allocated by this thread: on the training GPU, not device 0.
      const c10::OptionalDeviceGuard guard(o_.device.is_cuda() ? c10::optional<c10::Device>(o_.device) : c10::nullopt);
      while (TakeRequest()) ProduceEpoch();
    } catch (...) {
      std::lock_guard<std::mutex> lock(shared_->mutex);
      shared_->error = std::current_exception();
    }
    {
      std::lock_guard<std::mutex> lock(shared_->mutex);
      shared_->exited = true;
    }
    shared_->changed.notify_all();
  }

 private:
  // Waits for StartEpoch; false when asked to stop.
  bool TakeRequest() {
    std::unique_lock<std::mutex> lock(shared_->mutex);
    shared_->changed.wait(lock, [&] { return shared_->stop || shared_->requested; });
    if (shared_->stop) return false;
    shared_->requested = false;
    generation_ = shared_->generation;
    epoch_ = shared_->epoch;
    first_batch_ = shared_->first_batch;
    return true;
  }

  // Queues a batch, waiting for room; false if this epoch was abandoned (StartEpoch or stop).
  bool Push(Batch batch) {
    std::unique_lock<std::mutex> lock(shared_->mutex);
    shared_->changed.wait(lock, [&] {
      return shared_->stop || shared_->generation != generation_ ||
             static_cast<int64_t>(shared_->ready.size()) < o_.prefetch;
    });
    if (shared_->stop || shared_->generation != generation_) return false;
    shared_->ready.push_back(std::move(batch));
    lock.unlock();
    shared_->changed.notify_all();
    return true;
  }

  bool Abandoned() {
    std::lock_guard<std::mutex> lock(shared_->mutex);
    return shared_->stop || shared_->generation != generation_;
  }

  at::Tensor NewRows(const RowShape& shape, int64_t rows, bool pinned) const {
    return at::empty(shape.WithRows(rows), at::TensorOptions().dtype(at::kFloat).pinned_memory(pinned));
  }

  void AllocateWindowOnce() {
    if (!window_.empty()) return;
    // On 2 MiB pages: batches copy their rows out of the window in shuffled order (data/row_memory.h).
    for (const FieldRows& field : o_.schema.fields) {
      window_.push_back(EmptyRows(field.shape.WithRows(o_.window_blocks * o_.block_rows)));
    }
  }

  // An empty batch of o_.batch rows of every field.
  Batch NewBatch(bool pinned) const {
    Batch batch;
    for (const FieldRows& field : o_.schema.fields) {
      batch.names.push_back(field.name);
      batch.tensors.push_back(NewRows(field.shape, o_.batch, pinned));
    }
    return batch;
  }

  // File `i`, open: the first open remembers what the file was; the least recently used handle
  // is closed when more than kOpenFiles would be open.
  const RowFile& Open(size_t i) {
    for (auto it = open_.begin(); it != open_.end(); ++it) {
      if (it->first != i) continue;
      open_.splice(open_.begin(), open_, it);
      return *open_.front().second;
    }
    const std::string& path = o_.files.paths[i];
    if (!identities_[i]) identities_[i] = Identify(path);
    open_.emplace_front(i, OpenRowFile(path, MPI_COMM_NULL));
    if (open_.size() > kOpenFiles) open_.pop_back();
    return *open_.front().second;
  }

  // Reads `blocks` into the window buffers, one after another, piece by piece of each file; a
  // file read before must still be the file it was.
  void ReadWindow(const std::vector<int64_t>& blocks, size_t first, size_t end) {
    trace::Span span("read", "data");
    span.Set("blocks", static_cast<int64_t>(end - first));
    std::vector<FilePiece> pieces;
    for (size_t i = first; i < end; ++i) {
      for (const FilePiece& piece : o_.files.space.Pieces(plan_.Block(blocks[i]))) pieces.push_back(piece);
    }
    std::vector<bool> checked(o_.files.paths.size(), false);
    for (const FilePiece& piece : pieces) {
      if (checked[piece.file] || !identities_[piece.file]) continue;
      CheckUnchanged(o_.files.paths[piece.file], *identities_[piece.file], epoch_);
      checked[piece.file] = true;
    }
    int64_t rows = 0;
    for (const FilePiece& piece : pieces) {
      ReadPiece(Open(piece.file), o_.schema, piece, rows, window_);
      rows += piece.rows;
    }
    span.Set("rows", rows);
  }

  // The global row number of row `window_row` of the window of blocks [first, end).
  int64_t GlobalRow(const std::vector<int64_t>& blocks, size_t first, size_t end, int64_t window_row) const {
    for (size_t i = first; i < end; ++i) {
      const RowRange block = plan_.Block(blocks[i]);
      if (window_row < block.Size()) return block.begin + window_row;
      window_row -= block.Size();
    }
    return -1;
  }

  // Copies a row into a batch and checks its values on the way, as the static loader does on
  // load: a NaN in the file is reported as such, not as a diverged loss. One pass over the bytes
  // (a separate check after reading doubled the reader's memory traffic).
  void CopyFiniteRow(const float* from, float* to, int64_t elements, const std::string& key,
                     const std::vector<int64_t>& blocks, size_t first, size_t end, int64_t window_row) const {
    if (!CopyRowIfFinite(from, to, elements)) {
      const FilePiece at = o_.files.space.Locate(GlobalRow(blocks, first, end, window_row));
      throw DataError("'" + o_.files.paths[at.file] + "': dataset '" + key + "' has a NaN or Inf value in row " +
                      std::to_string(at.file_row) + "; clean or drop that row");
    }
  }

  // Serves batches first_batch_ .. batches_-1 of epoch_ in the order EpochBlockRowOrder defines.
  void ProduceEpoch() {
    AllocateWindowOnce();
    const std::vector<int64_t> blocks = EpochBlocks(plan_, o_.world_size, o_.rank, o_.seed, epoch_);
    const bool pinned = o_.device.is_cuda();
    const size_t fields = o_.schema.fields.size();
    std::vector<int64_t> elements;  // per field: floats in a row
    for (const FieldRows& field : o_.schema.fields) elements.push_back(field.shape.RowElements());
    int64_t skip = first_batch_ * o_.batch;  // rows before the first batch asked for
    int64_t produced = first_batch_;
    Batch batch = NewBatch(pinned);
    int64_t filled = 0;
    const auto window_blocks = static_cast<size_t>(o_.window_blocks);
    for (size_t first = 0, window = 0; first < blocks.size() && produced < batches_; first += window_blocks, ++window) {
      const size_t end = std::min(blocks.size(), first + window_blocks);
      int64_t window_rows = 0;
      for (size_t i = first; i < end; ++i) window_rows += plan_.Block(blocks[i]).Size();
      if (skip >= window_rows) {  // wholly before the first batch asked for: not read
        skip -= window_rows;
        continue;
      }
      if (Abandoned()) return;
      ReadWindow(blocks, first, end);
      const std::vector<int64_t> order =
          WindowPermutation(window_rows, o_.seed, epoch_, o_.rank, static_cast<int64_t>(window));
      for (int64_t k = skip; k < window_rows && produced < batches_; ++k) {
        const int64_t row = order[static_cast<size_t>(k)];
        for (size_t f = 0; f < fields; ++f) {
          CopyFiniteRow(window_[f].data_ptr<float>() + row * elements[f],
                        batch.tensors[f].data_ptr<float>() + filled * elements[f], elements[f],
                        o_.schema.fields[f].dataset, blocks, first, end, row);
        }
        if (++filled < o_.batch) continue;
        if (!Push(std::move(batch))) return;
        ++produced;
        filled = 0;
        batch = NewBatch(pinned);
      }
      skip = 0;
    }
  }

  std::shared_ptr<Shared> shared_;
  const BlockStreamOptions o_;
  const BlockPlan plan_;
  const int64_t batches_;
  uint64_t generation_ = 0;
  int64_t epoch_ = 0;
  int64_t first_batch_ = 0;
  std::list<std::pair<size_t, std::unique_ptr<RowFile>>> open_;  // most recently used first
  std::vector<std::optional<FileIdentity>> identities_;          // per file, once opened
  std::vector<at::Tensor> window_;  // per field, [window rows, ...]: the window's blocks, one after another
};

}  // namespace

int64_t AutoBlockRows(const DatasetSchema& schema, int world_size) {
  const int64_t row_bytes = schema.WidestRowBytes();
  const int64_t chunk_rows = schema.chunk_rows > 0 ? schema.chunk_rows : ChunkRowsFor(row_bytes, schema.Rows());
  return ChooseBlockRows(schema.Rows(), row_bytes, chunk_rows, world_size);
}

BlockStream::BlockStream(BlockStreamOptions options)
    : options_(std::move(options)),
      batches_(BlockStepsPerEpoch(BlockPlan{options_.schema.Rows(), options_.block_rows}, options_.world_size,
                                  options_.batch)),
      shared_(std::make_shared<Shared>()) {
  auto reader = std::make_shared<Reader>(shared_, options_, batches_);
  reader_ = std::thread([reader] { reader->Run(); });
}

BlockStream::~BlockStream() {
  std::unique_lock<std::mutex> lock(shared_->mutex);
  shared_->stop = true;
  shared_->changed.notify_all();
  // A read stuck on a hung file system must not keep a failing job from ending: after a grace
  // period the reader is left behind (it owns its state through shared pointers).
  const bool exited = shared_->changed.wait_for(lock, std::chrono::seconds(10), [&] { return shared_->exited; });
  lock.unlock();
  if (exited) {
    reader_.join();
  } else {
    reader_.detach();
  }
}

std::vector<FieldDims> BlockStream::Fields() const { return options_.schema.Dims(); }

std::string BlockStream::Describe() const {
  const BlockPlan plan{options_.schema.Rows(), options_.block_rows};
  const double block_mib = static_cast<double>(options_.block_rows * options_.schema.RowBytes()) / (1 << 20);
  const int64_t used = batches_ * options_.batch * options_.world_size;
  char text[320];
  std::snprintf(text, sizeof(text),
                "blocks: %lld blocks of %lld rows (%.1f MiB) dealt round-robin to %d ranks, rows shuffled within "
                "windows of %lld blocks, %lld batches read ahead; an epoch trains on %lld of the %lld rows (%.0f%%)",
                static_cast<long long>(plan.NumBlocks()), static_cast<long long>(options_.block_rows), block_mib,
                options_.world_size, static_cast<long long>(options_.window_blocks),
                static_cast<long long>(options_.prefetch), static_cast<long long>(used),
                static_cast<long long>(plan.rows), 100.0 * static_cast<double>(used) / static_cast<double>(plan.rows));
  return text;
}

void BlockStream::StartEpoch(int64_t epoch, int64_t first_batch) {
  {
    std::lock_guard<std::mutex> lock(shared_->mutex);
    ++shared_->generation;
    shared_->ready.clear();
    shared_->requested = true;
    shared_->epoch = epoch;
    shared_->first_batch = first_batch;
  }
  shared_->changed.notify_all();
}

Batch BlockStream::Next() {
  Batch batch;
  {
    std::unique_lock<std::mutex> lock(shared_->mutex);
    shared_->changed.wait(lock, [&] { return shared_->error || shared_->exited || !shared_->ready.empty(); });
    if (shared_->error) std::rethrow_exception(shared_->error);
    if (shared_->ready.empty()) throw Error("the block reader thread ended before the epoch's last batch");
    batch = std::move(shared_->ready.front());
    shared_->ready.pop_front();
  }
  shared_->changed.notify_all();
  if (options_.device.is_cpu()) return batch;
  return batch.Map([&](const at::Tensor& t) { return t.to(options_.device, /*non_blocking=*/true); });
}

}  // namespace ct
