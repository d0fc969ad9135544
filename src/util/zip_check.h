// Integrity of ZIP archives: PyTorch's checkpoint and model files (torch.save, torch.jit.save,
// LibTorch's OutputArchive) are ZIP archives, and LibTorch reads them without checking the
// CRC-32 that the archive keeps for each record (PyTorch builds miniz with CRC checks off), so a
// flipped byte inside a tensor loads silently as a wrong weight.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace ct {

struct ZipRecord {
  std::string name;  // "archive/data/3"
  uint64_t local_header_offset = 0;
  uint64_t compressed_size = 0;
  uint64_t size = 0;
  uint32_t crc32 = 0;
  uint16_t method = 0;  // 0 stored (PyTorch's writers), 8 deflated
};

// The central directory's records (ZIP64 too). Throws ct::DataError naming the file and what is
// wrong when the archive's structure cannot be read (truncated, not a ZIP archive).
std::vector<ZipRecord> ReadZipDirectory(const std::string& path);

// "" when every record's data reads and matches its CRC-32; else why not, e.g. "record
// 'archive/data/3' fails its CRC-32 check (stored 1a2b3c4d, computed ...)": the file was damaged
// after it was written. Reads the whole file once.
std::string ZipIntegrityProblem(const std::string& path);

}  // namespace ct
