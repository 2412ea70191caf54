// The secret of duet train's TCP store across hosts (train_workers.h,
// policy/learn/train/store_key.h): a file only the job's user can read.
#include <fcntl.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>

#include "tools/duet/train_workers.h"

namespace duet::cli {
namespace {

constexpr size_t kMinBytes = 16, kMaxBytes = 4096;

std::string how_to_make(const std::string& path) {
  return "make one that only you can read, the same on every node, e.g. (umask 077; mkdir -p \"$(dirname '" + path +
         "')\" && head -c 32 /dev/urandom | base64 > '" + path + "')";
}

}  // namespace

std::string default_store_secret_path(const EnvFn& env) {
  const char* home = env("HOME");
  std::string h = home && *home ? home : "";
  if (h.empty())
    if (const passwd* pw = getpwuid(getuid()); pw && pw->pw_dir) h = pw->pw_dir;
  if (h.empty()) throw std::runtime_error("--store-secret: no HOME to find the default secret file in; give the file");
  return h + "/.duet/train-secret";
}

std::string read_store_secret(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (fd < 0)
    throw std::runtime_error("the store's secret file " + path + ": " + std::strerror(errno) +
                             " (workers on several hosts need a shared secret; " + how_to_make(path) + ")");
  struct stat st {};
  std::string bytes;
  std::string problem;
  if (::fstat(fd, &st) != 0) {
    problem = std::strerror(errno);
  } else if (!S_ISREG(st.st_mode)) {
    problem = "not a regular file";
  } else if (st.st_uid != ::getuid()) {
    problem = "owned by uid " + std::to_string(st.st_uid) + ", not by you (uid " + std::to_string(::getuid()) + ")";
  } else if (st.st_mode & 077) {
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
    problem = std::string("others may read or change it (mode ") + mode + "; run chmod 600 '" + path + "')";
  } else {
    char buf[kMaxBytes + 1];
    size_t got = 0;
    while (got < sizeof buf) {
      const ssize_t n = ::read(fd, buf + got, sizeof buf - got);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) {
        problem = std::strerror(errno);
        break;
      }
      if (n == 0) break;
      got += static_cast<size_t>(n);
    }
    bytes.assign(buf, got);
    std::memset(buf, 0, sizeof buf);
    while (!bytes.empty() && (bytes.back() == '\n' || bytes.back() == '\r' || bytes.back() == ' ' ||
                              bytes.back() == '\t'))
      bytes.pop_back();
    if (problem.empty() && got > kMaxBytes) problem = "more than " + std::to_string(kMaxBytes) + " bytes";
    if (problem.empty() && bytes.size() < kMinBytes)
      problem = "only " + std::to_string(bytes.size()) + " bytes, at least " + std::to_string(kMinBytes) + " needed";
  }
  ::close(fd);
  if (!problem.empty())
    throw std::runtime_error("the store's secret file " + path + " is refused: " + problem + "; " + how_to_make(path));
  return bytes;
}

}  // namespace duet::cli
