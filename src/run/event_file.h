// TensorBoard event files, written by rank 0 into output.dir/tensorboard/: TFRecord framing
// (length, masked CRC-32C, payload, masked CRC-32C) around `Event` protocol-buffer messages
// (tensorflow/core/util/event.proto, summary.proto) holding scalar summaries.
//
// The few messages and fields needed are encoded here by hand (field numbers and wire types as
// the .proto files define them; tests/e2e/run_outputs.sh parses the files with Google's
// protobuf runtime and TensorBoard's message definitions). This keeps libprotobuf out of the
// binary, where pip's LibTorch carries a protobuf of its own.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace ct {

using Scalars = std::vector<std::pair<std::string, float>>;

// One Event as bytes: the scalars as one Summary (tag, simple_value each).
std::string ScalarEvent(double wall_time, int64_t step, const Scalars& scalars);
// The first event of a file: file_version "brain.Event:2".
std::string FileVersionEvent(double wall_time);
// SessionLog START at `step`: TensorBoard then drops the events at `step` and after that the
// files before it hold (as it does when a crashed run restarts).
std::string SessionStartEvent(double wall_time, int64_t step);
// TFRecord framing of one record.
std::string TfRecord(const std::string& payload);

class EventFileWriter {
 public:
  // Creates `dir` and events.out.tfevents.<seconds>.<host> in it, starting with the file
  // version. `purge_from_step` > 0 (a resumed run): a SessionLog START at that step follows, so
  // the events the stopped run wrote after its checkpoint no longer count.
  EventFileWriter(const std::string& dir, int64_t purge_from_step);
  ~EventFileWriter();
  EventFileWriter(const EventFileWriter&) = delete;
  EventFileWriter& operator=(const EventFileWriter&) = delete;

  void WriteScalars(int64_t step, const Scalars& scalars);
  const std::string& Path() const { return path_; }

 private:
  // One write() per record, appended: a crash leaves at most a torn last record, which
  // TensorBoard's reader skips.
  void Append(const std::string& event);

  std::string path_;
  int fd_ = -1;
};

}  // namespace ct
