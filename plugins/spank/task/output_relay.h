// Copies what the primary and, after a takeover, the backup append to the
// task's shared files DIR/out and DIR/err to vmha-task's own stdout and
// stderr, i.e. to Slurm. Each byte of a file is copied once, in order.
#pragma once
#include <cstdint>
#include <string>

namespace vmha_task {

class OutputRelay {
 public:
  OutputRelay(const std::string& out_path, const std::string& err_path);
  ~OutputRelay();
  OutputRelay(const OutputRelay&) = delete;
  OutputRelay& operator=(const OutputRelay&) = delete;

  void pump();  // copies everything appended so far
  uint64_t copied() const { return copied_; }

 private:
  struct Source {
    std::string path;
    int fd = -1;
    int to = -1;
  };
  void pump(Source& s);
  Source out_, err_;
  uint64_t copied_ = 0;
};

}  // namespace vmha_task
