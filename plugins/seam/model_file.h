// A model file as the seam hands it to an agent's loader: read once, checked
// (regular file, size limit, owner trusted) and checksummed from the same
// bytes, so what is named in the log is what was loaded.
#pragma once

#include <cstdint>
#include <string>

namespace duet::plugin {

struct ModelFile {
  std::string path;   // for messages
  std::string bytes;  // the whole file
  uint32_t cksum = 0;  // POSIX cksum(1) of bytes (file_cksum.h)
};

}  // namespace duet::plugin
