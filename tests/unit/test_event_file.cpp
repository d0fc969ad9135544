// TensorBoard event files: CRC-32C against its standard test vectors, the protocol-buffer bytes
// of an Event by hand, TFRecord framing, and the record's fields as tags. (tests/e2e/
// run_outputs.sh parses whole files with Google's protobuf runtime.)
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "run/event_file.h"
#include "run/tensorboard_log.h"
#include "util/crc32c.h"

namespace ct {
namespace {

uint32_t LittleEndian32(const std::string& bytes, size_t at) {
  uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = (v << 8) | static_cast<uint8_t>(bytes[at + static_cast<size_t>(i)]);
  return v;
}

TEST(Crc32c, StandardTestVectors) {
  // RFC 3720 (iSCSI), appendix B.4, and the common check value.
  EXPECT_EQ(Crc32c("123456789"), 0xE3069283u);
  EXPECT_EQ(Crc32c(std::string(32, '\0')), 0x8A9136AAu);
  EXPECT_EQ(Crc32c(std::string(32, '\xFF')), 0x62A8AB43u);
  std::string ascending;
  for (int i = 0; i < 32; ++i) ascending += static_cast<char>(i);
  EXPECT_EQ(Crc32c(ascending), 0x46DD794Eu);
  EXPECT_EQ(Crc32c(""), 0u);
  // TFRecord's mask: rotate right 15, add 0xa282ead8.
  const uint32_t crc = Crc32c("123456789");
  EXPECT_EQ(MaskedCrc32c("123456789"), ((crc >> 15) | (crc << 17)) + 0xa282ead8u);
}

TEST(EventFile, ScalarEventBytesFollowEventAndSummaryProtos) {
  // Event{wall_time: 0 (field 1, fixed64), step: 5 (field 2, varint), summary (field 5):
  //   Summary{value (field 1): Value{tag: "a" (field 1), simple_value: 1.0f (field 2, fixed32)}}}
  const std::string expected = std::string("\x09", 1) + std::string(8, '\0') + "\x10\x05" + "\x2A\x0A" + "\x0A\x08" +
                               "\x0A\x01" + "a" + std::string("\x15\x00\x00\x80\x3F", 5);
  EXPECT_EQ(ScalarEvent(0.0, 5, {{"a", 1.0f}}), expected);
  // A step above 127 takes two varint bytes (300 = 0xAC 0x02).
  EXPECT_NE(ScalarEvent(0.0, 300, {}).find("\x10\xAC\x02"), std::string::npos);
  // file_version (field 3) and SessionLog{status: START} (field 7).
  EXPECT_NE(FileVersionEvent(0.0).find("\x1A\x0D"
                                       "brain.Event:2"),
            std::string::npos);
  EXPECT_NE(SessionStartEvent(0.0, 7).find("\x10\x07\x3A\x02\x08\x01"), std::string::npos);
}

TEST(EventFile, TfRecordFraming) {
  const std::string payload = "hello";
  const std::string record = TfRecord(payload);
  ASSERT_EQ(record.size(), 8 + 4 + payload.size() + 4);
  EXPECT_EQ(record.substr(0, 8), std::string("\x05\0\0\0\0\0\0\0", 8));  // length, little-endian
  EXPECT_EQ(LittleEndian32(record, 8), MaskedCrc32c(record.substr(0, 8)));
  EXPECT_EQ(record.substr(12, payload.size()), payload);
  EXPECT_EQ(LittleEndian32(record, 12 + payload.size()), MaskedCrc32c(payload));
}

TEST(TensorBoardLog, EveryRecordFieldBecomesATag) {
  EpochRecord record;
  record.epoch = 3;
  record.global_step = 96;
  record.train_loss = 0.25;
  record.metric_names = {"mse", "kl"};
  record.train_metrics = {0.2, 1.25};
  record.val_metrics = {0.25, 1.5};
  record.compute_seconds = 2.0;
  record.lr = 1e-3;
  record.val_loss = std::nan("");
  const Scalars scalars = EpochScalars(record);
  auto value = [&](const std::string& tag) {
    for (const auto& [t, v] : scalars) {
      if (t == tag) return v;
    }
    ADD_FAILURE() << "no tag " << tag;
    return -1.0f;
  };
  EXPECT_EQ(value("epoch"), 3.0f);
  EXPECT_EQ(value("train/loss"), 0.25f);
  EXPECT_EQ(value("val/kl"), 1.5f);
  EXPECT_EQ(value("time/compute"), 2.0f);
  EXPECT_EQ(value("time/train"), 0.0f);
  EXPECT_EQ(value("lr"), 1e-3f);
  EXPECT_TRUE(std::isnan(value("val/loss")));
  EXPECT_EQ(scalars.size(), RecordFields(record).size() - 1);  // all but global_step, the step axis
}

}  // namespace
}  // namespace ct
