#include "vmha/output/held_output.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <string>

namespace vmha {

namespace {
// Which of vmha's own streams (1, 2) a guest stream fd writes to: the guest's
// fds are duplicates, so compare what they refer to.
bool same_object(int a, int b) {
  struct stat x, y;
  if (fstat(a, &x) != 0 || fstat(b, &y) != 0) return false;
  return x.st_dev == y.st_dev && x.st_ino == y.st_ino && x.st_rdev == y.st_rdev;
}

std::vector<uint8_t> gather(std::span<const iovec> data) {
  std::vector<uint8_t> out;
  for (const iovec& v : data) {
    const auto* p = static_cast<const uint8_t*>(v.iov_base);
    out.insert(out.end(), p, p + v.iov_len);
  }
  return out;
}

// A descriptor of the same file for the release: a fresh open through
// /proc (its own offset, no O_APPEND, still valid after an unlink), or a
// duplicate when that is refused.
int release_fd(int host_fd) {
  int fd = open(("/proc/self/fd/" + std::to_string(host_fd)).c_str(), O_WRONLY | O_CLOEXEC);
  return fd >= 0 ? fd : fcntl(host_fd, F_DUPFD_CLOEXEC, 0);
}
}  // namespace

HeldFile::~HeldFile() {
  if (fd >= 0) close(fd);
}

ssize_t HeldOutputSink::write(const OutputTarget& target, std::span<const iovec> data, off_t offset) {
  if (!target.path.empty()) return hold_file_write(target, data, offset);
  // Streams (no path in the working directory) leave the VM: hold them.
  if (offset >= 0) return PassthroughSink().write(target, data, offset);
  bool to1 = same_object(target.host_fd, 1), to2 = same_object(target.host_fd, 2);
  if (!to1 && !to2) return PassthroughSink().write(target, data, offset);
  int stream = to1 && to2 ? (target.guest_fd == 2 ? 2 : 1) : (to2 ? 2 : 1);
  OutputRecord r;
  r.bytes = gather(data);
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

// A write to a regular file: resolve where it lands now (O_APPEND: the end
// of the file with its held writes; else the given offset or the fd's
// position), move the fd's position past it, keep the bytes.
ssize_t HeldOutputSink::hold_file_write(const OutputTarget& target, std::span<const iovec> data, off_t offset) {
  struct stat st;
  int flags = fcntl(target.host_fd, F_GETFL);
  if (fstat(target.host_fd, &st) != 0 || !S_ISREG(st.st_mode) || flags < 0 || (flags & O_ACCMODE) == O_RDONLY)
    return PassthroughSink().write(target, data, offset);  // devices, directories, errors as the host says
  OutputRecord r;
  r.bytes = gather(data);
  ssize_t n = static_cast<ssize_t>(r.bytes.size());
  if (n == 0) return 0;
  std::lock_guard<std::mutex> lock(mu_);
  // The size again, under mu_: a release since the fstat above may have
  // written the held end and dropped its hold (see stat_as_guest).
  if ((flags & O_APPEND) && fstat(target.host_fd, &st) != 0) return -errno;
  InodeKey key{st.st_dev, st.st_ino};
  auto [it, fresh] = inodes_.try_emplace(key);
  InodeHold& h = it->second;
  if (fresh) {
    int fd = release_fd(target.host_fd);
    if (fd < 0) {
      int err = errno;
      inodes_.erase(it);
      return -err;
    }
    h.file = std::make_shared<HeldFile>(fd, st.st_dev, st.st_ino);
  }
  uint64_t at;
  if (flags & O_APPEND) {  // like Linux, also for pwrite
    at = std::max<uint64_t>(static_cast<uint64_t>(st.st_size), h.end);
  } else if (offset >= 0) {
    at = static_cast<uint64_t>(offset);
  } else {
    off_t cur = lseek(target.host_fd, 0, SEEK_CUR);
    if (cur < 0) {
      int err = errno;
      if (h.records == 0) inodes_.erase(it);
      return -err;
    }
    at = static_cast<uint64_t>(cur);
  }
  if (offset < 0) lseek(target.host_fd, static_cast<off_t>(at + r.bytes.size()), SEEK_SET);
  h.end = std::max<uint64_t>(h.end, at + r.bytes.size());
  ++h.records;
  r.at = std::chrono::steady_clock::now();
  r.seq = next_seq_++;
  r.stream = 0;
  r.stream_pos = at;
  r.path = target.path;
  r.file = h.file;
  pending_.push_back(std::move(r));
  ++pending_files_;
  held_files_.fetch_add(1);
  return n;
}

// File-system changes wait until no file write is held: afterwards the
// host's files are what the guest wrote, and a backup re-applying a
// checkpoint's writes by path finds the files those paths named then.
long HeldOutputSink::change(const std::string& what, const std::function<long()>& apply, const UndoPrepare& prepare) {
  if (holds_files()) {
    blocked_.store(true);
    return kWaitForRelease;
  }
  if (prepare) undo_.record(prepare);
  return PassthroughSink().change(what, apply);
}

bool HeldOutputSink::must_wait(int host_fd) {
  if (!holds_files()) return false;
  struct stat st;
  if (fstat(host_fd, &st) != 0 || !S_ISREG(st.st_mode)) return false;
  std::lock_guard<std::mutex> lock(mu_);
  if (!inodes_.count({st.st_dev, st.st_ino})) return false;
  blocked_.store(true);
  return true;
}

// Under mu_, so that a release cannot fall between the host's answer and the
// adjustment: its pwrite comes before it drops the hold (under mu_), so the
// host size is either the old one with the hold still counted, or the new
// one. Outside the lock, a release in between returned the old size alone
// (filelog's lseek(SEEK_END) check failed that way on a loaded host).
int HeldOutputSink::stat_as_guest(const std::function<int(struct stat*)>& host_stat, struct stat* st) {
  std::lock_guard<std::mutex> lock(mu_);
  int rc = host_stat(st);
  if (rc < 0 || held_files_.load() == 0 || !S_ISREG(st->st_mode)) return rc;
  auto it = inodes_.find({st->st_dev, st->st_ino});
  if (it != inodes_.end()) st->st_size = std::max<off_t>(st->st_size, static_cast<off_t>(it->second.end));
  return rc;
}

void HeldOutputSink::wait_for_release(std::chrono::microseconds max) {
  std::unique_lock<std::mutex> lock(mu_);
  uint64_t seen = releases_;
  released_.wait_for(lock, max, [&] { return releases_ != seen || !holds_files(); });
}

bool HeldOutputSink::release_file(const OutputRecord& r) {
  bool ok = r.file && pwrite_fully(r.file->fd, r.bytes.data(), r.bytes.size(), r.stream_pos);
  int err = r.file ? errno : EBADF;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (r.file) {
      auto it = inodes_.find({r.file->dev, r.file->ino});
      if (it != inodes_.end() && --it->second.records == 0) inodes_.erase(it);
    }
    held_files_.fetch_sub(1);
    ++releases_;
    blocked_.store(false);  // a waiting call runs again and says if it still waits
  }
  released_.notify_all();
  errno = err;
  return ok;
}

std::vector<OutputRecord> HeldOutputSink::take() {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<OutputRecord> out;
  out.swap(pending_);
  pending_files_ = 0;
  undo_.set_epoch(++takes_ + 1);
  return out;
}

bool HeldOutputSink::waiting() const {
  std::lock_guard<std::mutex> lock(mu_);
  return pending_.size() > pending_files_;
}

bool HeldOutputSink::release_wanted() const {
  std::lock_guard<std::mutex> lock(mu_);
  return blocked_.load() && pending_files_ > 0;
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

bool pwrite_fully(int fd, const uint8_t* bytes, size_t len, uint64_t offset) {
  while (len > 0) {
    ssize_t n = ::pwrite(fd, bytes, len, static_cast<off_t>(offset));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    bytes += n;
    len -= static_cast<size_t>(n);
    offset += static_cast<uint64_t>(n);
  }
  return true;
}

}  // namespace vmha
