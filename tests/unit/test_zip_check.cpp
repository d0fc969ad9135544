// util/zip_check: a checkpoint's records are checked against their CRC-32 before it is trusted.
#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <torch/serialize/output-archive.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>

#include "util/zip_check.h"

namespace ct {
namespace {

std::string TempPath(const std::string& name) {
  return testing::TempDir() + "ct_zip_" + std::to_string(getpid()) + "_" + name;
}

// An archive as LibTorch writes checkpoints (its deflated records, which larger code records are,
// are checked in tests/e2e/resume_safety.sh on a real checkpoint).
std::string WriteArchive(const std::string& name) {
  torch::serialize::OutputArchive archive;
  archive.write("weights", at::arange(4096, at::kFloat));
  torch::serialize::OutputArchive child(archive.compilation_unit());  // a module: a code record
  child.write("bias", at::ones({16}));
  archive.write("child", child);
  const std::string path = TempPath(name);
  archive.save_to(path);
  return path;
}

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

void WriteAll(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

const ZipRecord& Find(const std::vector<ZipRecord>& records, const std::string& tail) {
  for (const ZipRecord& r : records) {
    if (r.name.size() >= tail.size() && r.name.compare(r.name.size() - tail.size(), tail.size(), tail) == 0) return r;
  }
  throw std::runtime_error("no record " + tail);
}

TEST(ZipCheck, AnIntactArchivePassesWithEveryRecordListed) {
  const std::string path = WriteArchive("intact.pt");
  EXPECT_EQ(ZipIntegrityProblem(path), "");
  const std::vector<ZipRecord> records = ReadZipDirectory(path);
  EXPECT_GE(records.size(), 4u);
  EXPECT_EQ(Find(records, "data/0").size, 4096u * 4);
  std::remove(path.c_str());
}

TEST(ZipCheck, AFlippedByteInsideATensorFailsItsRecordsCrc) {
  const std::string path = WriteArchive("flipped.pt");
  const ZipRecord record = Find(ReadZipDirectory(path), "data/0");
  std::string bytes = ReadAll(path);
  // The record's data follow its local header (30 bytes, the name, the extra field).
  const size_t header = record.local_header_offset;
  const size_t name_length = static_cast<unsigned char>(bytes[header + 26]) | bytes[header + 27] << 8;
  const size_t extra_length = static_cast<unsigned char>(bytes[header + 28]) | bytes[header + 29] << 8;
  bytes[header + 30 + name_length + extra_length + 1000] ^= 0x10;
  WriteAll(path, bytes);
  const std::string problem = ZipIntegrityProblem(path);
  EXPECT_NE(problem.find("record '" + record.name + "' fails its CRC-32 check"), std::string::npos) << problem;
  std::remove(path.c_str());
}

TEST(ZipCheck, ATruncatedFileOrAnotherFormatIsNamed) {
  const std::string path = WriteArchive("cut.pt");
  const std::string bytes = ReadAll(path);
  WriteAll(path, bytes.substr(0, bytes.size() / 2));
  EXPECT_NE(ZipIntegrityProblem(path).find("not a readable ZIP archive"), std::string::npos);
  WriteAll(path, std::string(5000, 'x'));
  EXPECT_NE(ZipIntegrityProblem(path).find("no end-of-directory record"), std::string::npos);
  // The directory itself damaged: its records can no longer be found.
  const std::string intact = WriteArchive("directory.pt");
  std::string damaged = ReadAll(intact);
  const size_t directory = damaged.rfind(std::string("PK\x01\x02", 4));
  damaged[directory + 1] = 'X';
  WriteAll(intact, damaged);
  EXPECT_NE(ZipIntegrityProblem(intact), "");
  std::remove(path.c_str());
  std::remove(intact.c_str());
}

}  // namespace
}  // namespace ct
