// CRC32C (Castagnoli, the iSCSI/ext4 polynomial): checksums of frames, pages and
// state blobs. Uses the SSE4.2 crc32 instruction when the CPU has it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace vmha {

// Continues a running CRC: crc32c(crc32c(0, a), b) == crc32c(0, a||b).
std::uint32_t crc32c(std::uint32_t crc, const void* data, std::size_t length);

inline std::uint32_t crc32c(std::span<const std::uint8_t> data) { return crc32c(0, data.data(), data.size()); }

}  // namespace vmha
