#include "util/crc32c.h"

#include <array>

namespace ct {
namespace {

// One table entry per byte value: the CRC of that byte alone (a byte at a time, 256 entries).
std::array<uint32_t, 256> MakeTable() {
  std::array<uint32_t, 256> table{};
  for (uint32_t n = 0; n < 256; ++n) {
    uint32_t c = n;
    for (int bit = 0; bit < 8; ++bit) c = (c & 1) ? (c >> 1) ^ 0x82F63B78u : c >> 1;
    table[n] = c;
  }
  return table;
}

}  // namespace

uint32_t Crc32c(std::string_view bytes) {
  static const std::array<uint32_t, 256> table = MakeTable();
  uint32_t crc = ~0u;
  for (const char byte : bytes) crc = table[(crc ^ static_cast<uint8_t>(byte)) & 0xFF] ^ (crc >> 8);
  return ~crc;
}

uint32_t MaskedCrc32c(std::string_view bytes) {
  const uint32_t crc = Crc32c(bytes);
  return ((crc >> 15) | (crc << 17)) + 0xa282ead8u;
}

}  // namespace ct
