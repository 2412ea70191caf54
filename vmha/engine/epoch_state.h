// The state blob of one checkpoint (what travels in the State message):
// the VM state without its memory (the pages travel as page lists), the output
// held in this epoch, how much output was released before it, and — for the
// last checkpoint — how the guest ended. The backup uses it to take over and
// continue the released output exactly once.
#pragma once
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "vmha/common/status.h"
#include "vmha/output/held_output.h"

namespace vmha {

struct StreamInfo {           // the primary's view of one output stream (fd 1, 2)
  uint64_t dev = 0, ino = 0;  // of a regular file (0: not a regular file)
  uint64_t base_size = 0;     // its size when the run started
  uint64_t released = 0;      // bytes released before this checkpoint
};

struct EpochState {
  static constexpr uint32_t kFinished = 1;
  uint64_t epoch = 0;
  uint32_t flags = 0;
  int32_t end_kind = 0;  // RunResult::End of a finished guest
  int32_t end_code = 0;
  uint64_t released_seq = 0;  // records 1..released_seq were released before
  StreamInfo streams[3];      // index 1 and 2 used
  std::vector<OutputRecord> held;
  std::vector<uint8_t> vm_state;  // Vm::save(..., with_memory=false); empty when finished

  std::vector<uint8_t> encode() const;
  static Status decode(std::span<const uint8_t> bytes, EpochState* out);
};

// Fills dev/ino/base_size of fd if it is a regular file.
StreamInfo describe_stream(int fd);

// Backup, on takeover: writes the held records the primary did not release.
// File records are all written again beneath `workdir` (a pwrite of the same
// bytes at the same offset is idempotent; a file no longer there is skipped).
// Streams: when the backup's fd is the same regular file as the primary's, the
// file's size says exactly how much was released (exactly once); otherwise
// records released before the checkpoint are skipped and this epoch's are
// written (at most one epoch may repeat if the primary died while releasing it).
// Refused, before anything is written, when the primary's stdout file holds
// more than the checkpoint accounts for: the primary lost this backup and went
// on alone past it, and resuming would repeat that output.
Status release_unreleased(const EpochState& st, const std::string& workdir, uint64_t* bytes_written);

}  // namespace vmha
