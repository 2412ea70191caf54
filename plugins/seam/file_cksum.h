// POSIX cksum(1) of a file: names a loaded model in the plugins' logs so a
// reader (or a test) can tell which file is in use: `cksum FILE` prints the
// same number.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace duet::plugin {

// Returns false (and *error) when the file cannot be read or is not a
// regular file of at most max_bytes (policy/util/safe_file.h).
bool file_cksum(const std::string& path, uint32_t* crc, std::string* error, uint64_t max_bytes = uint64_t{256} << 20);
// The same number for bytes already read.
uint32_t bytes_cksum(std::string_view bytes);

}  // namespace duet::plugin
