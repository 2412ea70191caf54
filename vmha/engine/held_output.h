// HeldOutputSink: output commit. Bytes the guest writes to its host streams
// (stdout, stderr: targets without a path) are held per epoch and released
// only after the backup acknowledged the checkpoint that covers them. Each
// record carries a sequence number and its byte position in its stream, so a
// backup that takes over releases every byte exactly once (release.h).
// File writes and file-system changes go straight to the host: the guest may
// read them back at once, so holding them would change what it sees.
#pragma once
#include <chrono>
#include <cstdint>
#include <mutex>
#include <vector>

#include "vmha/output/output_sink.h"

namespace vmha {

struct OutputRecord {
  uint64_t seq = 0;         // 1, 2, ... over the whole run
  int stream = 1;           // host fd: 1 stdout, 2 stderr
  uint64_t stream_pos = 0;  // bytes of this stream before this record
  std::vector<uint8_t> bytes;
  std::chrono::steady_clock::time_point at{};  // when the guest wrote it (not sent)
};

class HeldOutputSink : public OutputSink {
 public:
  ssize_t write(const OutputTarget& target, std::span<const iovec> data, off_t offset) override;
  long change(const std::string& what, const std::function<long()>& apply) override;

  // Records written since the last call (the vCPU is paused: the epoch's output).
  std::vector<OutputRecord> take();
  bool waiting() const;       // output written since the last take()
  uint64_t held_bytes() const;

 private:
  mutable std::mutex mu_;
  std::vector<OutputRecord> pending_;
  uint64_t next_seq_ = 1;
  uint64_t pos_[3] = {0, 0, 0};
};

// Writes `bytes` fully to fd (retrying short writes); false on error.
bool write_fully(int fd, const uint8_t* bytes, size_t len);

}  // namespace vmha
