#include "plugins/spank/task/output_relay.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

namespace vmha_task {

OutputRelay::OutputRelay(const std::string& out_path, const std::string& err_path) {
  out_.path = out_path;
  out_.to = 1;
  err_.path = err_path;
  err_.to = 2;
}

OutputRelay::~OutputRelay() {
  if (out_.fd >= 0) close(out_.fd);
  if (err_.fd >= 0) close(err_.fd);
}

void OutputRelay::pump() {
  pump(out_);
  pump(err_);
}

void OutputRelay::pump(Source& s) {
  if (s.fd < 0) s.fd = open(s.path.c_str(), O_RDONLY | O_CLOEXEC);
  if (s.fd < 0) return;
  char buf[65536];
  while (true) {
    ssize_t n = read(s.fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    for (ssize_t done = 0; done < n;) {
      ssize_t w = write(s.to, buf + done, static_cast<size_t>(n - done));
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) return;  // Slurm's end is gone: nothing left to tell
      done += w;
    }
    copied_ += static_cast<uint64_t>(n);
  }
}

}  // namespace vmha_task
