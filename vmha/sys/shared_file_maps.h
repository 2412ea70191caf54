// Writable MAP_SHARED mappings of files (Python's multiprocessing
// semaphores in /dev/shm, numpy.memmap): the guest's processes share the
// mapping's frames (it is mapped as shared memory, which a fork passes on),
// filled from the file when mapped; what the guest changed is written back
// to the file through the output layer (held like any file write under
// replication) on msync, munmap, exec and exit: the pages whose contents
// differ from the file's, within its size. Not coherent with read() and
// write() of the same file meanwhile; a process that maps the file
// separately (not by fork) gets its own frames. Not in checkpoints: after a
// takeover the frames stay shared, and changes are no longer written back.
#pragma once
#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

namespace vmha {

struct Process;

class SharedFileMaps {
 public:
  SharedFileMaps() = default;
  SharedFileMaps(const SharedFileMaps&) = delete;
  SharedFileMaps& operator=(const SharedFileMaps&) = delete;
  ~SharedFileMaps();

  // [start, start + len) maps the file behind host_fd (duplicated) from
  // `offset`; `path` is its recorded path (the output layer's target).
  // 0 or -errno.
  int add(uint64_t start, uint64_t len, int host_fd, off_t offset, const std::string& path);
  // Writes back the changed pages of [addr, addr + len) of p's mappings.
  void write_back(Process& p, uint64_t addr, uint64_t len);
  void write_back_all(Process& p) { write_back(p, 0, ~uint64_t{0}); }
  // The range is no longer mapped (after write_back where wanted).
  void forget(uint64_t addr, uint64_t len);
  void clear() { forget(0, ~uint64_t{0}); }
  // A forked child's: the same mappings (the frames are shared).
  void fork_from(const SharedFileMaps& parent);
  bool empty() const { return maps_.empty(); }

 private:
  struct Map {
    uint64_t start, end;
    int fd;
    off_t offset;
    std::string path;
  };
  std::vector<Map> maps_;
};

}  // namespace vmha
