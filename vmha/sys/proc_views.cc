#include "vmha/sys/proc_views.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstring>
#include <vector>

namespace vmha {

namespace {

std::vector<std::string> components(const std::string& path) {
  std::vector<std::string> parts;
  for (size_t at = 0; at < path.size();) {
    size_t end = path.find('/', at);
    if (end == std::string::npos) end = path.size();
    if (end > at) parts.push_back(path.substr(at, end - at));
    at = end + 1;
  }
  return parts;
}

bool all_digits(const std::string& s) {
  return !s.empty() && s.size() < 10 && s.find_first_not_of("0123456789") == std::string::npos;
}

// A working-directory-relative path made absolute, its `.` and `..`
// components folded (a recorded path never climbs above the directory).
std::string under_root(const std::string& root, const std::string& rel) {
  std::vector<std::string> kept;
  for (std::string& c : components(rel)) {
    if (c == ".") continue;
    if (c == "..") {
      if (!kept.empty()) kept.pop_back();
      continue;
    }
    kept.push_back(std::move(c));
  }
  std::string out = root;
  for (const std::string& c : kept) out += (out.size() > 1 ? "/" : "") + c;
  return out;
}

// One getdents64 record (struct linux_dirent64), padded to 8 bytes; its
// d_off is the byte offset of the next one, so lseek/seekdir work on it.
void add_record(std::string& out, uint64_t ino, unsigned char type, const std::string& name) {
  const size_t head = offsetof(dirent64, d_name);
  const size_t len = (head + name.size() + 1 + 7) & ~size_t{7};
  std::string rec(len, '\0');
  dirent64 d{};
  d.d_ino = ino;
  d.d_off = static_cast<int64_t>(out.size() + len);
  d.d_reclen = static_cast<unsigned short>(len);
  d.d_type = type;
  std::memcpy(rec.data(), &d, head);
  std::memcpy(rec.data() + head, name.data(), name.size());
  out += rec;
}

}  // namespace

ProcView proc_view(const Process& p, const std::string& path) {
  ProcView v;
  if (path.empty() || path[0] != '/') return v;
  std::vector<std::string> c = components(path);
  if (c.size() < 3 || c[0] != "proc") return v;
  if (c[1] != "self" && c[1] != "thread-self" && c[1] != std::to_string(p.pid)) return v;
  if (c.size() == 3 && c[2] == "exe") v.kind = ProcView::Kind::kExe;
  if (c.size() == 3 && c[2] == "cwd") v.kind = ProcView::Kind::kCwd;
  if (c.size() == 3 && c[2] == "fd") v.kind = ProcView::Kind::kFdDir;
  if (c.size() == 4 && c[2] == "fd" && all_digits(c[3])) {
    v.kind = ProcView::Kind::kFdLink;
    v.fd = std::atoi(c[3].c_str());
  }
  return v;
}

int proc_link_target(Process& p, const ProcView& v, std::string* target) {
  switch (v.kind) {
    case ProcView::Kind::kExe:
      if (p.exe.empty()) return -ENOENT;
      *target = p.exe;
      return 0;
    case ProcView::Kind::kCwd:
      *target = p.root.guest_path(p.root.cwd().recorded, p.root.cwd().read_only);
      return 0;
    case ProcView::Kind::kFdLink:
      break;
    default:
      return -EINVAL;  // not a link
  }
  const FdEntry* e = p.fds.get(v.fd);
  if (!e) return -ENOENT;
  switch (e->kind) {
    case FdKind::kFile:
      *target = p.root.guest_path(e->path, false);
      return 0;
    case FdKind::kReadOnly:
    case FdKind::kDevice:
      *target = e->path;
      return 0;
    case FdKind::kPipe:
      *target = "pipe:[" + std::to_string(e->channel) + "]";
      return 0;
    case FdKind::kSocket:
    case FdKind::kUnixSocket:
    case FdKind::kUnixListener:
      *target = "socket:[" + std::to_string(e->channel) + "]";
      return 0;
    case FdKind::kEpoll:
      *target = "anon_inode:[eventpoll]";
      return 0;
    case FdKind::kProcFds:
      *target = "/proc/" + std::to_string(p.pid) + "/fd";
      return 0;
    case FdKind::kStdStream: {
      // What vmha's own stream is (a terminal, a file, a pipe), as the host names it.
      char buf[PATH_MAX];
      ssize_t n = readlink(("/proc/self/fd/" + std::to_string(e->host_fd)).c_str(), buf, sizeof buf);
      if (n < 0) return -errno;
      target->assign(buf, static_cast<size_t>(n));
      return 0;
    }
  }
  return -ENOENT;
}

int fill_fd_listing(const Process& p, int fd) {
  std::string recs;
  add_record(recs, 1, DT_DIR, ".");
  add_record(recs, 2, DT_DIR, "..");
  const std::vector<FdEntry>& slots = p.fds.entries();
  for (size_t fd = 0; fd < slots.size(); ++fd)
    if (slots[fd].host_fd >= 0) add_record(recs, 0x1000 + fd, DT_LNK, std::to_string(fd));
  if (write(fd, recs.data(), recs.size()) != static_cast<ssize_t>(recs.size()) || lseek(fd, 0, SEEK_SET) != 0)
    return errno ? -errno : -EIO;
  return 0;
}

long read_fd_listing(int host_fd, char* buf, size_t size) {
  off_t at = lseek(host_fd, 0, SEEK_CUR);
  if (at < 0) return -errno;
  ssize_t n = pread(host_fd, buf, size, at);
  if (n < 0) return -errno;
  // Whole records only: cut before the first one that did not fit.
  size_t used = 0;
  while (used + offsetof(dirent64, d_name) <= static_cast<size_t>(n)) {
    unsigned short len;
    std::memcpy(&len, buf + used + offsetof(dirent64, d_reclen), sizeof len);
    if (len == 0 || used + len > static_cast<size_t>(n)) break;
    used += len;
  }
  if (used == 0 && n > 0) return -EINVAL;
  lseek(host_fd, at + static_cast<off_t>(used), SEEK_SET);
  return static_cast<long>(used);
}

std::string program_path(const std::string& cwd, const std::string& path) {
  std::string abs = path.empty() || path[0] == '/' ? under_root("/", path) : under_root(cwd, path);
  char real[PATH_MAX];
  return realpath(abs.c_str(), real) ? std::string(real) : abs;
}

}  // namespace vmha
