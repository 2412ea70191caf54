#include "plugins/seam/state_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "plugins/seam/file_text.h"
#include "plugins/seam/file_trust.h"

namespace duet::plugin {
namespace {

std::string errno_text(const std::string& what) { return what + ": " + std::strerror(errno); }

// Closes on every path out.
struct Fd {
  int fd;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

bool write_all(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    bytes.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

}  // namespace

bool write_state_file(const std::string& path, std::string_view bytes, std::string* error) {
  const std::string tmp = path + ".new";
  {
    Fd f{::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600)};
    if (f.fd < 0) {
      *error = errno_text("cannot create " + tmp);
      return false;
    }
    // a PATH.new left by an older crash keeps its mode through O_TRUNC
    const bool ok = ::fchmod(f.fd, 0600) == 0 && write_all(f.fd, bytes) && ::fsync(f.fd) == 0;
    if (!ok || ::close(f.fd) != 0) {
      f.fd = -1;
      *error = errno_text("cannot write " + tmp);
      ::unlink(tmp.c_str());
      return false;
    }
    f.fd = -1;
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    *error = errno_text("cannot rename " + tmp + " to " + path);
    ::unlink(tmp.c_str());
    return false;
  }
  // the rename itself reaches the disk only with its directory
  Fd dir{::open(dir_of(path).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC)};
  if (dir.fd < 0 || ::fsync(dir.fd) != 0) {
    *error = errno_text("cannot sync the directory " + dir_of(path));
    return false;
  }
  return true;
}

StateRead read_state_file(const std::string& path, std::uint32_t slurm_user_uid, size_t max_bytes, std::string* bytes,
                          std::string* error) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return StateRead::kMissing;
    *error = errno_text("cannot stat");
    return StateRead::kRefused;
  }
  if (!file_trusted(path, slurm_user_uid, error)) return StateRead::kRefused;
  Fd f{::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK)};  // a FIFO must not block slurmctld
  if (f.fd < 0) {
    *error = errno_text("cannot open");
    return StateRead::kRefused;
  }
  if (::fstat(f.fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    *error = "not a regular file";
    return StateRead::kRefused;
  }
  if (static_cast<unsigned long long>(st.st_size) > max_bytes) {
    *error = std::to_string(st.st_size) + " bytes, more than " + std::to_string(max_bytes);
    return StateRead::kRefused;
  }
  std::string out(static_cast<size_t>(st.st_size), '\0');
  size_t got = 0;
  while (got < out.size()) {
    const ssize_t n = ::read(f.fd, out.data() + got, out.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      *error = errno_text("cannot read");
      return StateRead::kRefused;
    }
    if (n == 0) break;  // shrunk meanwhile: the decoder sees a cut file
    got += static_cast<size_t>(n);
  }
  out.resize(got);
  *bytes = std::move(out);
  return StateRead::kRead;
}

}  // namespace duet::plugin
