#include "run/event_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>

#include "util/crc32c.h"
#include "util/error.h"

namespace ct {
namespace {

// Protocol-buffer wire format: a field's key is (number << 3) | wire type.
enum WireType : uint32_t { kVarint = 0, kFixed64 = 1, kLengthDelimited = 2, kFixed32 = 5 };

void PutVarint(std::string& out, uint64_t value) {
  while (value >= 0x80) {
    out += static_cast<char>((value & 0x7F) | 0x80);
    value >>= 7;
  }
  out += static_cast<char>(value);
}

void PutKey(std::string& out, uint32_t field, WireType type) { PutVarint(out, (field << 3) | type); }

void PutLittleEndian(std::string& out, uint64_t bits, int bytes) {
  for (int i = 0; i < bytes; ++i) out += static_cast<char>((bits >> (8 * i)) & 0xFF);
}

void PutDouble(std::string& out, uint32_t field, double value) {
  uint64_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  PutKey(out, field, kFixed64);
  PutLittleEndian(out, bits, 8);
}

void PutFloat(std::string& out, uint32_t field, float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  PutKey(out, field, kFixed32);
  PutLittleEndian(out, bits, 4);
}

void PutBytes(std::string& out, uint32_t field, const std::string& bytes) {
  PutKey(out, field, kLengthDelimited);
  PutVarint(out, bytes.size());
  out += bytes;
}

void PutInt64(std::string& out, uint32_t field, int64_t value) {
  PutKey(out, field, kVarint);
  PutVarint(out, static_cast<uint64_t>(value));
}

// Event: wall_time = 1 (double), step = 2 (int64), then one of file_version = 3 (string),
// summary = 5 (Summary), session_log = 7 (SessionLog).
std::string EventHeader(double wall_time, int64_t step) {
  std::string event;
  PutDouble(event, 1, wall_time);
  if (step != 0) PutInt64(event, 2, step);  // proto3: a zero is not written
  return event;
}

double Now() { return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count(); }

}  // namespace

std::string ScalarEvent(double wall_time, int64_t step, const Scalars& scalars) {
  std::string summary;  // Summary: repeated Value value = 1; Value: tag = 1, simple_value = 2
  for (const auto& [tag, value] : scalars) {
    std::string one;
    PutBytes(one, 1, tag);
    PutFloat(one, 2, value);
    PutBytes(summary, 1, one);
  }
  std::string event = EventHeader(wall_time, step);
  PutBytes(event, 5, summary);
  return event;
}

std::string FileVersionEvent(double wall_time) {
  std::string event = EventHeader(wall_time, 0);
  PutBytes(event, 3, "brain.Event:2");
  return event;
}

std::string SessionStartEvent(double wall_time, int64_t step) {
  std::string session_log;  // SessionLog: status = 1 (enum; START = 1)
  PutInt64(session_log, 1, 1);
  std::string event = EventHeader(wall_time, step);
  PutBytes(event, 7, session_log);
  return event;
}

std::string TfRecord(const std::string& payload) {
  std::string length;
  PutLittleEndian(length, payload.size(), 8);
  std::string record = length;
  PutLittleEndian(record, MaskedCrc32c(length), 4);
  record += payload;
  PutLittleEndian(record, MaskedCrc32c(payload), 4);
  return record;
}

EventFileWriter::EventFileWriter(const std::string& dir, int64_t purge_from_step) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  char host[256] = "localhost";
  gethostname(host, sizeof host - 1);
  const double now = Now();
  path_ = dir + "/events.out.tfevents." + std::to_string(static_cast<int64_t>(now)) + "." + host;
  // A run resumed within the same second appends to the file of that second: still valid.
  fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd_ < 0) {
    throw DataError("cannot create the TensorBoard event file '" + path_ + "': " + std::strerror(errno) +
                    "; check that output.dir is writable, or set output.tensorboard: false");
  }
  Append(FileVersionEvent(now));
  if (purge_from_step > 0) Append(SessionStartEvent(now, purge_from_step));
}

EventFileWriter::~EventFileWriter() {
  if (fd_ >= 0) ::close(fd_);
}

void EventFileWriter::WriteScalars(int64_t step, const Scalars& scalars) { Append(ScalarEvent(Now(), step, scalars)); }

void EventFileWriter::Append(const std::string& event) {
  const std::string record = TfRecord(event);
  const ssize_t written = ::write(fd_, record.data(), record.size());
  if (written != static_cast<ssize_t>(record.size())) {
    throw DataError("cannot write the TensorBoard event file '" + path_ +
                    "': " + (written < 0 ? std::strerror(errno) : "short write (disk full?)") +
                    "; free space in output.dir, or set output.tensorboard: false");
  }
}

}  // namespace ct
