// Confinement: every path the guest names is resolved beneath its working
// directory (openat2 with RESOLVE_BENEATH), so `..`, absolute paths and
// symlinks cannot lead out. Absolute paths inside the working directory are
// accepted; a few harmless devices are allowed by exact name.
#pragma once
#include <string>

#include "vmha/common/status.h"

namespace vmha {

class Confinement {
 public:
  ~Confinement();
  Status open_root(const std::string& dir);
  int root_fd() const { return root_fd_; }
  const std::string& root_path() const { return root_path_; }

  // Turns an absolute guest path inside the root into a relative one; -EACCES
  // for absolute paths elsewhere. Relative paths are returned unchanged.
  int relative(const std::string& path, std::string* out) const;
  static bool is_allowed_device(const std::string& path);

  // openat2 beneath dir_fd (a host fd that is the root or a directory under
  // it). Returns a host fd or -errno (escapes give -EACCES).
  int open_beneath(int dir_fd, const std::string& rel, int flags, unsigned mode) const;
  // Opens the parent directory of rel beneath dir_fd; *base gets the last
  // component. Returns a host fd (O_PATH) or -errno.
  int open_parent(int dir_fd, const std::string& rel, std::string* base) const;

 private:
  int root_fd_ = -1;
  std::string root_path_;
};

}  // namespace vmha
