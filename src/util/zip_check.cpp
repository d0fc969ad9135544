#include "util/zip_check.h"

#include <fcntl.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "util/error.h"

namespace ct {
namespace {

constexpr uint32_t kEndOfDirectory = 0x06054b50;
constexpr uint32_t kZip64Locator = 0x07064b50;
constexpr uint32_t kZip64EndOfDirectory = 0x06064b50;
constexpr uint32_t kDirectoryEntry = 0x02014b50;
constexpr uint32_t kLocalHeader = 0x04034b50;
constexpr size_t kChunk = 1 << 20;

// Little-endian fields of a byte buffer.
uint64_t Field(const unsigned char* p, int bytes) {
  uint64_t value = 0;
  for (int i = bytes - 1; i >= 0; --i) value = (value << 8) | p[i];
  return value;
}

class File {
 public:
  explicit File(const std::string& path) : fd_(open(path.c_str(), O_RDONLY | O_CLOEXEC)) {
    if (fd_ < 0) throw DataError(std::string("cannot open it: ") + std::strerror(errno));
    size_ = static_cast<uint64_t>(lseek(fd_, 0, SEEK_END));
  }
  ~File() { close(fd_); }
  File(const File&) = delete;
  File& operator=(const File&) = delete;

  uint64_t Size() const { return size_; }

  // Exactly `bytes` at `offset`, or DataError("... truncated").
  void Read(uint64_t offset, unsigned char* out, size_t bytes) const {
    if (offset > size_ || bytes > size_ - offset) Broken("it ends before the data it describes (truncated)");
    size_t done = 0;
    while (done < bytes) {
      const ssize_t n = pread(fd_, out + done, bytes - done, static_cast<off_t>(offset + done));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) Broken(n < 0 ? std::strerror(errno) : "it ends early (truncated)");
      done += static_cast<size_t>(n);
    }
  }

  // The path is left to the caller's message.
  [[noreturn]] void Broken(const std::string& why) const { throw DataError("not a readable ZIP archive: " + why); }

 private:
  int fd_;
  uint64_t size_ = 0;
};

struct Directory {
  uint64_t entries = 0;
  uint64_t offset = 0;
  uint64_t size = 0;
};

// The end-of-central-directory record is in the last 22 + 65535 bytes (a trailing comment).
Directory FindDirectory(const File& file) {
  const uint64_t tail = std::min<uint64_t>(file.Size(), 22 + 65535);
  std::vector<unsigned char> buffer(tail);
  file.Read(file.Size() - tail, buffer.data(), tail);
  for (int64_t at = static_cast<int64_t>(tail) - 22; at >= 0; --at) {
    const unsigned char* p = buffer.data() + at;
    if (Field(p, 4) != kEndOfDirectory) continue;
    Directory d{Field(p + 10, 2), Field(p + 16, 4), Field(p + 12, 4)};
    const uint64_t eocd = file.Size() - tail + static_cast<uint64_t>(at);
    if (d.entries == 0xFFFF || d.offset == 0xFFFFFFFF || d.size == 0xFFFFFFFF) {
      // ZIP64: a locator just before this record points at the 64-bit record.
      unsigned char locator[20];
      if (eocd < 20) file.Broken("its ZIP64 locator is missing");
      file.Read(eocd - 20, locator, 20);
      if (Field(locator, 4) != kZip64Locator) file.Broken("its ZIP64 locator is missing");
      unsigned char record[56];
      file.Read(Field(locator + 8, 8), record, 56);
      if (Field(record, 4) != kZip64EndOfDirectory) file.Broken("its ZIP64 end record is damaged");
      d = {Field(record + 32, 8), Field(record + 48, 8), Field(record + 40, 8)};
    }
    return d;
  }
  file.Broken("no end-of-directory record (truncated, or not a ZIP archive)");
}

// The ZIP64 extended-information extra field holds the sizes and offset whose 32-bit fields are
// 0xFFFFFFFF, in this order.
void ApplyZip64Extra(const unsigned char* extra, size_t length, ZipRecord& r) {
  for (size_t at = 0; at + 4 <= length;) {
    const uint64_t id = Field(extra + at, 2), size = Field(extra + at + 2, 2);
    const unsigned char* p = extra + at + 4;
    const unsigned char* end = p + std::min<uint64_t>(size, length - at - 4);
    if (id == 0x0001) {
      if (r.size == 0xFFFFFFFF && p + 8 <= end) r.size = Field(p, 8), p += 8;
      if (r.compressed_size == 0xFFFFFFFF && p + 8 <= end) r.compressed_size = Field(p, 8), p += 8;
      if (r.local_header_offset == 0xFFFFFFFF && p + 8 <= end) r.local_header_offset = Field(p, 8);
    }
    at += 4 + size;
  }
}

// CRC-32 of a record's data as stored (method 0) or inflated (method 8).
uint32_t RecordCrc(const File& file, uint64_t data_offset, const ZipRecord& r) {
  std::vector<unsigned char> in(kChunk);
  uLong crc = crc32(0L, Z_NULL, 0);
  if (r.method == 0) {
    for (uint64_t done = 0; done < r.compressed_size;) {
      const size_t n = static_cast<size_t>(std::min<uint64_t>(kChunk, r.compressed_size - done));
      file.Read(data_offset + done, in.data(), n);
      crc = crc32(crc, in.data(), static_cast<uInt>(n));
      done += n;
    }
    return static_cast<uint32_t>(crc);
  }
  z_stream z{};
  if (inflateInit2(&z, -MAX_WBITS) != Z_OK) file.Broken("zlib cannot start inflating");
  std::unique_ptr<z_stream, int (*)(z_stream*)> guard(&z, inflateEnd);
  std::vector<unsigned char> out(kChunk);
  int status = Z_OK;
  for (uint64_t done = 0; status != Z_STREAM_END && done < r.compressed_size;) {
    const size_t n = static_cast<size_t>(std::min<uint64_t>(kChunk, r.compressed_size - done));
    file.Read(data_offset + done, in.data(), n);
    done += n;
    z.next_in = in.data();
    z.avail_in = static_cast<uInt>(n);
    do {
      z.next_out = out.data();
      z.avail_out = static_cast<uInt>(out.size());
      status = inflate(&z, Z_NO_FLUSH);
      if (status != Z_OK && status != Z_STREAM_END) return ~static_cast<uint32_t>(r.crc32);  // corrupt stream
      crc = crc32(crc, out.data(), static_cast<uInt>(out.size() - z.avail_out));
    } while (z.avail_out == 0 && status != Z_STREAM_END);
  }
  return static_cast<uint32_t>(crc);
}

}  // namespace

namespace {

std::vector<ZipRecord> ReadRecords(const std::string& path) {
  const File file(path);
  const Directory d = FindDirectory(file);
  if (d.size > file.Size()) file.Broken("its directory is larger than the file (truncated)");
  std::vector<unsigned char> bytes(d.size);
  file.Read(d.offset, bytes.data(), bytes.size());
  std::vector<ZipRecord> records;
  for (size_t at = 0; records.size() < d.entries;) {
    if (at + 46 > bytes.size() || Field(&bytes[at], 4) != kDirectoryEntry) file.Broken("its directory is damaged");
    const unsigned char* p = &bytes[at];
    ZipRecord r;
    r.method = static_cast<uint16_t>(Field(p + 10, 2));
    r.crc32 = static_cast<uint32_t>(Field(p + 16, 4));
    r.compressed_size = Field(p + 20, 4);
    r.size = Field(p + 24, 4);
    const size_t name_length = Field(p + 28, 2), extra_length = Field(p + 30, 2), comment_length = Field(p + 32, 2);
    r.local_header_offset = Field(p + 42, 4);
    if (at + 46 + name_length + extra_length + comment_length > bytes.size()) file.Broken("its directory is damaged");
    r.name.assign(reinterpret_cast<const char*>(p + 46), name_length);
    ApplyZip64Extra(p + 46 + name_length, extra_length, r);
    records.push_back(r);
    at += 46 + name_length + extra_length + comment_length;
  }
  return records;
}

}  // namespace

std::vector<ZipRecord> ReadZipDirectory(const std::string& path) {
  try {
    return ReadRecords(path);
  } catch (const DataError& e) {
    throw DataError("'" + path + "': " + e.what());
  }
}

std::string ZipIntegrityProblem(const std::string& path) {
  std::vector<ZipRecord> records;
  try {
    records = ReadRecords(path);
  } catch (const DataError& e) {
    return e.what();
  }
  try {
    const File file(path);
    for (const ZipRecord& r : records) {
      unsigned char header[30];
      file.Read(r.local_header_offset, header, 30);
      const size_t name_length = Field(header + 26, 2), extra_length = Field(header + 28, 2);
      std::string name(name_length, '\0');
      file.Read(r.local_header_offset + 30, reinterpret_cast<unsigned char*>(name.data()), name_length);
      if (Field(header, 4) != kLocalHeader || name != r.name) {
        return "the header of record '" + r.name + "' is damaged";
      }
      if (r.method != 0 && r.method != 8) continue;  // no writer of ours uses another method
      const uint32_t crc = RecordCrc(file, r.local_header_offset + 30 + name_length + extra_length, r);
      if (crc != r.crc32) {
        char detail[64];
        std::snprintf(detail, sizeof(detail), "stored %08x, computed %08x", r.crc32, crc);
        return "record '" + r.name + "' fails its CRC-32 check (" + detail +
               "): the file was damaged after it was written";
      }
    }
  } catch (const DataError& e) {
    return e.what();
  }
  return "";
}

}  // namespace ct
