#include "vmha/engine/held_output.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

namespace vmha {

namespace {
// Which of vmha's own streams (1, 2) a guest stream fd writes to: the guest's
// fds are duplicates, so compare what they refer to.
bool same_object(int a, int b) {
  struct stat x, y;
  if (fstat(a, &x) != 0 || fstat(b, &y) != 0) return false;
  return x.st_dev == y.st_dev && x.st_ino == y.st_ino && x.st_rdev == y.st_rdev;
}
}  // namespace

ssize_t HeldOutputSink::write(const OutputTarget& target, std::span<const iovec> data, off_t offset) {
  // Streams (no path in the working directory) leave the VM: hold them.
  if (!target.path.empty() || offset >= 0) return PassthroughSink().write(target, data, offset);
  bool to1 = same_object(target.host_fd, 1), to2 = same_object(target.host_fd, 2);
  if (!to1 && !to2) return PassthroughSink().write(target, data, offset);
  int stream = to1 && to2 ? (target.guest_fd == 2 ? 2 : 1) : (to2 ? 2 : 1);
  OutputRecord r;
  for (const iovec& v : data) {
    const auto* p = static_cast<const uint8_t*>(v.iov_base);
    r.bytes.insert(r.bytes.end(), p, p + v.iov_len);
  }
  ssize_t n = static_cast<ssize_t>(r.bytes.size());
  if (n == 0) return 0;
  std::lock_guard<std::mutex> lock(mu_);
  r.at = std::chrono::steady_clock::now();
  r.seq = next_seq_++;
  r.stream = stream;
  r.stream_pos = pos_[r.stream];
  pos_[r.stream] += r.bytes.size();
  pending_.push_back(std::move(r));
  return n;
}

long HeldOutputSink::change(const std::string& what, const std::function<long()>& apply) {
  return PassthroughSink().change(what, apply);
}

std::vector<OutputRecord> HeldOutputSink::take() {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<OutputRecord> out;
  out.swap(pending_);
  return out;
}

bool HeldOutputSink::waiting() const {
  std::lock_guard<std::mutex> lock(mu_);
  return !pending_.empty();
}

uint64_t HeldOutputSink::held_bytes() const {
  std::lock_guard<std::mutex> lock(mu_);
  uint64_t n = 0;
  for (const auto& r : pending_) n += r.bytes.size();
  return n;
}

bool write_fully(int fd, const uint8_t* bytes, size_t len) {
  while (len > 0) {
    ssize_t n = ::write(fd, bytes, len);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    bytes += n;
    len -= static_cast<size_t>(n);
  }
  return true;
}

}  // namespace vmha
