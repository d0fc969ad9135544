// CRC-32C (Castagnoli), the checksum of TFRecord framing (TensorBoard event files).
#pragma once

#include <cstdint>
#include <string_view>

namespace ct {

// The plain CRC-32C of `bytes` (reflected, polynomial 0x82F63B78, init and final xor ~0).
uint32_t Crc32c(std::string_view bytes);

// TFRecord's masked form: the CRC rotated right by 15 bits plus 0xa282ead8, so that a CRC of
// data holding CRCs is not degenerate.
uint32_t MaskedCrc32c(std::string_view bytes);

}  // namespace ct
