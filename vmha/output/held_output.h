// HeldOutputSink: output commit. Bytes the guest writes to its host streams
// (stdout, stderr: targets without a path) and to regular files in its working
// directory are held per epoch and released only after the backup
// acknowledged the checkpoint that covers them.
// Stream records carry a sequence number and their byte position in their
// stream, so a backup that takes over releases every byte exactly once.
// File records carry the path (relative to the working directory) and the
// absolute offset resolved when the guest wrote: releasing one is a pwrite,
// idempotent, so a backup re-applies a checkpoint's file writes blindly.
// The guest sees its held writes: its fd position moves as if written,
// fstat/stat/lseek(SEEK_END) report the size with them, and a call that would
// read the file (read, mmap, ...) or change the file system waits for their
// release (kWaitForRelease: the call runs again afterwards).
#pragma once
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "vmha/output/output_sink.h"

namespace vmha {

// The primary's own descriptor of a file with held writes: opened anew (no
// O_APPEND, its own position), so neither a guest close/rename nor the
// guest's O_APPEND flag affects the release.
struct HeldFile {
  HeldFile(int fd_, dev_t dev_, ino_t ino_) : fd(fd_), dev(dev_), ino(ino_) {}
  ~HeldFile();
  HeldFile(const HeldFile&) = delete;
  HeldFile& operator=(const HeldFile&) = delete;
  int fd;
  dev_t dev;
  ino_t ino;
};

struct OutputRecord {
  uint64_t seq = 0;         // 1, 2, ... over the whole run
  int stream = 1;           // host fd: 1 stdout, 2 stderr; 0: a file write
  uint64_t stream_pos = 0;  // streams: bytes of this stream before this record; files: the offset
  std::vector<uint8_t> bytes;
  std::string path;                            // files: relative to the working directory
  std::shared_ptr<HeldFile> file;              // files, primary only: where the release writes
  std::chrono::steady_clock::time_point at{};  // when the guest wrote it (not sent)
  bool is_file() const { return stream == 0; }
};

class HeldOutputSink : public OutputSink {
 public:
  ssize_t write(const OutputTarget& target, std::span<const iovec> data, off_t offset) override;
  long change(const std::string& what, const std::function<long()>& apply,
              const UndoPrepare& prepare = nullptr) override;
  UndoLog* undo() override { return undo_.enabled() ? &undo_ : nullptr; }
  UndoLog& undo_log() { return undo_; }
  bool holds_files() const override { return held_files_.load(std::memory_order_relaxed) > 0; }
  bool must_wait(int host_fd) override;
  int stat_as_guest(const std::function<int(struct stat*)>& host_stat, struct stat* st) override;
  void wait_for_release(std::chrono::microseconds max) override;

  // Records written since the last call (the vCPU is paused: the epoch's
  // output); changes from now on belong to the next epoch (undo_log.h).
  std::vector<OutputRecord> take();
  // Stream output written since the last take() (someone waits for it; file
  // writes alone do not end an epoch early).
  bool waiting() const;
  // The guest waits for held file writes still in this epoch: end it now.
  bool release_wanted() const;
  uint64_t held_bytes() const;
  // Writes a file record to its file (after the Ack) and lets waiting calls
  // run again; false (errno set) when the host write failed.
  bool release_file(const OutputRecord& r);

 private:
  ssize_t hold_file_write(const OutputTarget& target, std::span<const iovec> data, off_t offset);
  struct InodeHold {
    std::shared_ptr<HeldFile> file;
    uint64_t records = 0;  // held, not yet released
    uint64_t end = 0;      // largest end offset of its held writes
  };
  using InodeKey = std::pair<dev_t, ino_t>;

  mutable std::mutex mu_;
  std::condition_variable released_;
  std::vector<OutputRecord> pending_;
  uint64_t pending_files_ = 0;  // file records in pending_
  uint64_t next_seq_ = 1;
  uint64_t pos_[3] = {0, 0, 0};
  std::map<InodeKey, InodeHold> inodes_;  // files with held writes
  std::atomic<uint64_t> held_files_{0};   // file records not yet released
  std::atomic<bool> blocked_{false};      // a guest call waits for a release
  uint64_t releases_ = 0;
  uint64_t takes_ = 0;  // checkpoints taken: changes now belong to epoch takes_ + 1
  UndoLog undo_;
};

// Writes `bytes` fully to fd (retrying short writes); false on error.
bool write_fully(int fd, const uint8_t* bytes, size_t len);
// Writes `bytes` fully at `offset` of fd; false on error.
bool pwrite_fully(int fd, const uint8_t* bytes, size_t len, uint64_t offset);

}  // namespace vmha
