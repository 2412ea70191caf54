#include "vmha/output/undo_log.h"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace vmha {

namespace {

constexpr char kMagic[8] = {'V', 'M', 'H', 'A', 'U', 'N', 'D', 'O'};
constexpr uint32_t kMaxEntry = 1u << 20;  // one change's steps: a few paths

void put_u64(std::vector<uint8_t>& out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<uint8_t>(v >> (8 * i)));
}
void put_str(std::vector<uint8_t>& out, const std::string& s) {
  put_u64(out, s.size());
  out.insert(out.end(), s.begin(), s.end());
}

struct Reader {
  const uint8_t* p;
  size_t n;
  bool ok = true;
  uint64_t u64() {
    if (n < 8) return ok = false, 0;
    uint64_t v = 0;
    for (int i = 0; i < 8; ++i) v |= static_cast<uint64_t>(p[i]) << (8 * i);
    p += 8, n -= 8;
    return v;
  }
  std::string str() {
    uint64_t len = u64();
    if (!ok || len > n || len > 4096) return ok = false, std::string();
    std::string s(reinterpret_cast<const char*>(p), len);
    p += len, n -= len;
    return s;
  }
};

std::vector<uint8_t> encode(uint64_t epoch, const std::vector<UndoStep>& steps) {
  std::vector<uint8_t> out;
  put_u64(out, epoch);
  put_u64(out, steps.size());
  for (const UndoStep& s : steps) {
    put_u64(out, static_cast<uint64_t>(s.kind));
    put_str(out, s.a);
    put_str(out, s.b);
    for (uint64_t v : {s.mode, s.uid, s.gid, s.offset, s.size}) put_u64(out, v);
    put_u64(out, static_cast<uint64_t>(s.atime_ns));
    put_u64(out, static_cast<uint64_t>(s.mtime_ns));
  }
  return out;
}

bool write_all(int fd, const uint8_t* p, size_t n) {
  while (n > 0) {
    ssize_t w = ::write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    p += w, n -= static_cast<size_t>(w);
  }
  return true;
}

bool write_frame(int fd, const std::vector<uint8_t>& bytes) {
  uint8_t len[4];
  const uint32_t n = static_cast<uint32_t>(bytes.size());
  std::memcpy(len, &n, 4);
  std::vector<uint8_t> frame(len, len + 4);
  frame.insert(frame.end(), bytes.begin(), bytes.end());
  return write_all(fd, frame.data(), frame.size());  // one write: a kill leaves a whole frame or a short tail
}

// A working-directory-relative path as the guest's calls recorded it: no
// empty, `.` or `..` component and not absolute (a journal the user edited
// may hold anything).
bool plain(const std::string& path) {
  if (path.empty() || path[0] == '/' || path.size() > 4096) return false;
  size_t start = 0;
  while (start <= path.size()) {
    size_t slash = path.find('/', start);
    if (slash == std::string::npos) slash = path.size();
    const std::string c = path.substr(start, slash - start);
    if (c.empty() || c == "." || c == "..") return false;
    start = slash + 1;
  }
  return true;
}

int beneath(int root, const std::string& rel, int flags) {
  open_how how{};
  how.flags = static_cast<uint64_t>(flags) | O_CLOEXEC;
  how.resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS;
  return static_cast<int>(syscall(SYS_openat2, root, rel.c_str(), &how, sizeof how));
}

// The parent directory of `path` beneath root (a fd) and its last component.
struct Place {
  int dir = -1;
  std::string base;
  ~Place() {
    if (dir >= 0) close(dir);
  }
  bool exists() const {
    struct stat st;
    return fstatat(dir, base.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0;
  }
};

bool place(int root, const std::string& path, Place* out) {
  if (!plain(path)) return false;
  const size_t slash = path.rfind('/');
  out->base = slash == std::string::npos ? path : path.substr(slash + 1);
  out->dir = beneath(root, slash == std::string::npos ? "." : path.substr(0, slash), O_PATH | O_DIRECTORY);
  return out->dir >= 0;
}

void undo_step(int root, const UndoStep& s) {
  Place a, b;
  if (!place(root, s.a, &a)) return;
  switch (s.kind) {
    case UndoStep::Kind::kRemove: {
      struct stat st;
      if (fstatat(a.dir, a.base.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) return;
      unlinkat(a.dir, a.base.c_str(), S_ISDIR(st.st_mode) ? AT_REMOVEDIR : 0);
      return;
    }
    case UndoStep::Kind::kLink:
      if (place(root, s.b, &b) && !b.exists() && a.exists()) linkat(a.dir, a.base.c_str(), b.dir, b.base.c_str(), 0);
      return;
    case UndoStep::Kind::kSymlink:
      if (place(root, s.b, &b) && !b.exists()) symlinkat(s.a.c_str(), b.dir, b.base.c_str());
      return;
    case UndoStep::Kind::kMkdir:
      if (!a.exists()) mkdirat(a.dir, a.base.c_str(), static_cast<mode_t>(s.mode & 07777));
      return;
    case UndoStep::Kind::kRename:
      if (place(root, s.b, &b) && a.exists() && !b.exists())
        renameat(a.dir, a.base.c_str(), b.dir, b.base.c_str());
      return;
    case UndoStep::Kind::kExchange:
      if (place(root, s.b, &b) && a.exists() && b.exists())
        syscall(SYS_renameat2, a.dir, a.base.c_str(), b.dir, b.base.c_str(), RENAME_EXCHANGE);
      return;
    case UndoStep::Kind::kRestoreTail: {
      int fd = beneath(root, s.a, O_WRONLY | O_NOFOLLOW);
      if (fd < 0) return;
      int saved = s.b.empty() || !plain(s.b) ? -1 : beneath(root, s.b, O_RDONLY | O_NOFOLLOW);
      if (saved >= 0) {
        uint8_t buf[65536];
        off_t at = static_cast<off_t>(s.offset);
        for (ssize_t n; (n = read(saved, buf, sizeof buf)) > 0; at += n)
          if (pwrite(fd, buf, static_cast<size_t>(n), at) != n) break;
        close(saved);
      }
      if (ftruncate(fd, static_cast<off_t>(s.size)) != 0) { /* as far as it goes */
      }
      close(fd);
      return;
    }
    case UndoStep::Kind::kAttributes: {
      if (!a.exists()) return;
      int fd = beneath(root, s.a, O_PATH | O_NOFOLLOW);
      if (fd >= 0) {
        struct stat st;
        if (fstat(fd, &st) == 0 && !S_ISLNK(st.st_mode))
          chmod(("/proc/self/fd/" + std::to_string(fd)).c_str(), static_cast<mode_t>(s.mode & 07777));
        close(fd);
      }
      if (fchownat(a.dir, a.base.c_str(), static_cast<uid_t>(s.uid), static_cast<gid_t>(s.gid), AT_SYMLINK_NOFOLLOW) !=
          0) { /* not ours to change: as far as it goes */
      }
      timespec t[2] = {{s.atime_ns / 1000000000, s.atime_ns % 1000000000},
                       {s.mtime_ns / 1000000000, s.mtime_ns % 1000000000}};
      utimensat(a.dir, a.base.c_str(), t, AT_SYMLINK_NOFOLLOW);
      return;
    }
  }
}

}  // namespace

UndoLog::~UndoLog() { close(); }

Status UndoLog::open(int root_fd, const std::string& dir) {
  std::lock_guard<std::mutex> lock(mu_);
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  entries_.clear();
  if (!plain(dir)) return Status::error("undo journal directory '" + dir + "' is not a plain relative path");
  size_t start = 0;
  while (true) {  // each component of dir, made if missing
    size_t slash = dir.find('/', start);
    const std::string part = dir.substr(0, slash);
    if (mkdirat(root_fd, part.c_str(), 0700) != 0 && errno != EEXIST)
      return Status::error(errno_text("undo journal directory " + part));
    if (slash == std::string::npos) break;
    start = slash + 1;
  }
  const std::string data = dir + "/undo-data";
  if (mkdirat(root_fd, data.c_str(), 0700) != 0 && errno != EEXIST)
    return Status::error(errno_text("undo journal directory " + data));
  root_fd_ = root_fd;
  dir_ = dir;
  fd_ = beneath(root_fd, dir + "/undo", O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW);
  if (fd_ < 0) return Status::error(errno_text("undo journal " + dir + "/undo"));
  if (!write_all(fd_, reinterpret_cast<const uint8_t*>(kMagic), sizeof kMagic)) {
    Status s = Status::error(errno_text("undo journal " + dir + "/undo"));
    ::close(fd_);
    fd_ = -1;
    return s;
  }
  return Status();
}

bool UndoLog::enabled() const {
  std::lock_guard<std::mutex> lock(mu_);
  return fd_ >= 0;
}

void UndoLog::close() {
  std::lock_guard<std::mutex> lock(mu_);
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  entries_.clear();
}

void UndoLog::set_epoch(uint64_t epoch) {
  std::lock_guard<std::mutex> lock(mu_);
  epoch_ = epoch;
}

std::string UndoLog::data_path() {
  std::lock_guard<std::mutex> lock(mu_);
  return dir_ + "/undo-data/" + std::to_string(next_data_++);
}

std::string UndoLog::save_bytes(int src_fd, uint64_t from, uint64_t to) {
  if (!enabled()) return "";
  const std::string path = data_path();
  int fd = beneath(root_fd_, path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW);
  if (fd < 0) return "";
  uint8_t buf[65536];
  bool ok = true;
  for (uint64_t at = from; ok && at < to;) {
    ssize_t n = pread(src_fd, buf, static_cast<size_t>(std::min<uint64_t>(sizeof buf, to - at)), static_cast<off_t>(at));
    if (n <= 0) break;  // the file was shorter: what there was
    ok = write_all(fd, buf, static_cast<size_t>(n));
    at += static_cast<uint64_t>(n);
  }
  ::close(fd);
  if (!ok) {
    unlinkat(root_fd_, path.c_str(), 0);
    return "";
  }
  return path;
}

void UndoLog::record(const std::function<std::vector<UndoStep>()>& prepare) {
  if (!enabled()) return;
  std::vector<UndoStep> steps = prepare();  // may call data_path(): outside mu_
  if (steps.empty()) return;
  std::lock_guard<std::mutex> lock(mu_);
  if (fd_ < 0) return;
  Entry e{epoch_, encode(epoch_, steps), {}};
  for (const UndoStep& s : steps)
    if (s.kind == UndoStep::Kind::kRestoreTail && !s.b.empty()) e.data.push_back(s.b);
  // A journal that cannot be written leaves this change without an undo: a
  // takeover then finds it made, as before the journal existed.
  (void)write_frame(fd_, e.bytes);
  entries_.push_back(std::move(e));
}

void UndoLog::acknowledged(uint64_t epoch) {
  std::lock_guard<std::mutex> lock(mu_);
  if (fd_ < 0) return;
  auto keep = std::stable_partition(entries_.begin(), entries_.end(), [&](const Entry& e) { return e.epoch > epoch; });
  if (keep == entries_.end()) return;
  for (auto it = keep; it != entries_.end(); ++it)
    for (const std::string& d : it->data) unlinkat(root_fd_, d.c_str(), 0);
  entries_.erase(keep, entries_.end());
  rewrite();
}

void UndoLog::rewrite() {
  // Truncating in place would lose the later entries for a moment: a new
  // file renamed over the journal replaces it at once.
  const std::string tmp = dir_ + "/undo.new";
  int fd = beneath(root_fd_, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW);
  if (fd < 0) return;
  bool ok = write_all(fd, reinterpret_cast<const uint8_t*>(kMagic), sizeof kMagic);
  for (const Entry& e : entries_) ok = ok && write_frame(fd, e.bytes);
  if (!ok || renameat(root_fd_, tmp.c_str(), root_fd_, (dir_ + "/undo").c_str()) != 0) {
    ::close(fd);
    unlinkat(root_fd_, tmp.c_str(), 0);
    return;
  }
  ::close(fd_);
  fd_ = fd;
}

Status undo_changes_after(int root_fd, const std::string& dir, uint64_t checkpoint, size_t* undone) {
  *undone = 0;
  if (!plain(dir)) return Status::error("undo journal directory '" + dir + "' is not a plain relative path");
  int fd = beneath(root_fd, dir + "/undo", O_RDONLY | O_NOFOLLOW);
  if (fd < 0) return errno == ENOENT ? Status() : Status::error(errno_text("undo journal " + dir + "/undo"));
  std::vector<uint8_t> bytes;
  uint8_t buf[65536];
  for (ssize_t n; (n = read(fd, buf, sizeof buf)) > 0;) bytes.insert(bytes.end(), buf, buf + n);
  close(fd);
  if (bytes.size() < sizeof kMagic || std::memcmp(bytes.data(), kMagic, sizeof kMagic) != 0)
    return Status::error("undo journal " + dir + "/undo: no VMHAUNDO magic");
  std::vector<std::vector<UndoStep>> changes;
  size_t at = sizeof kMagic;
  while (bytes.size() - at >= 4) {
    uint32_t len;
    std::memcpy(&len, bytes.data() + at, 4);
    if (len > kMaxEntry || bytes.size() - at - 4 < len) break;  // the tail of a write cut by a kill: not applied
    Reader r{bytes.data() + at + 4, len};
    at += 4 + len;
    const uint64_t epoch = r.u64(), count = r.u64();
    if (!r.ok || count > 64) return Status::error("undo journal " + dir + "/undo: a malformed entry");
    std::vector<UndoStep> steps;
    for (uint64_t i = 0; i < count && r.ok; ++i) {
      UndoStep s;
      const uint64_t kind = r.u64();
      if (kind < 1 || kind > static_cast<uint64_t>(UndoStep::Kind::kAttributes)) r.ok = false;
      s.kind = static_cast<UndoStep::Kind>(kind);
      s.a = r.str();
      s.b = r.str();
      s.mode = r.u64(), s.uid = r.u64(), s.gid = r.u64(), s.offset = r.u64(), s.size = r.u64();
      s.atime_ns = static_cast<int64_t>(r.u64()), s.mtime_ns = static_cast<int64_t>(r.u64());
      steps.push_back(std::move(s));
    }
    if (!r.ok) return Status::error("undo journal " + dir + "/undo: a malformed entry");
    if (epoch > checkpoint) changes.push_back(std::move(steps));
  }
  for (auto c = changes.rbegin(); c != changes.rend(); ++c) {
    for (auto s = c->rbegin(); s != c->rend(); ++s) undo_step(root_fd, *s);
    ++*undone;
  }
  return Status();
}

}  // namespace vmha
