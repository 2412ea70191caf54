#include "plugins/seam/file_trust.h"

#include <sys/stat.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>

#include "plugins/seam/file_text.h"
#include "policy/util/printable.h"

namespace duet::plugin {
namespace {

// Who may change `st`'s file besides root and `uid`: "" if nobody.
std::string writers(const struct stat& st, std::uint32_t uid, bool dir) {
  if (st.st_uid != 0 && st.st_uid != uid) return "owned by uid " + std::to_string(st.st_uid);
  const bool sticky = dir && (st.st_mode & S_ISVTX);
  if ((st.st_mode & S_IWOTH) && !sticky) return "writable by others (mode " + mode_text(st.st_mode) + ")";
  if ((st.st_mode & S_IWGRP) && !sticky)
    return "writable by group " + std::to_string(st.st_gid) + " (mode " + mode_text(st.st_mode) + ")";
  return "";
}

bool dir_trusted(const std::string& dir, std::uint32_t uid, std::string* error) {
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0) {
    *error = "directory " + printable(dir) + ": cannot stat: " + std::strerror(errno);
    return false;
  }
  std::string w = writers(st, uid, true);
  if (w.empty()) return true;
  *error = "its directory " + printable(dir) + " is " + w;
  return false;
}

}  // namespace

bool file_trusted(const std::string& path, std::uint32_t uid, std::string* error) {
  const std::string tail = "; only root and SlurmUser (uid " + std::to_string(uid) + ") may be able to change it";
  std::string why;
  auto untrusted = [&](std::string reason) {
    if (error) *error = std::move(reason);
    return false;
  };
  char real[PATH_MAX];
  if (!::realpath(path.c_str(), real))
    return untrusted(std::string("cannot resolve the path: ") + std::strerror(errno));
  struct stat st {};
  if (::stat(real, &st) != 0) return untrusted(std::string("cannot stat: ") + std::strerror(errno));
  if (std::string w = writers(st, uid, false); !w.empty()) return untrusted("the file is " + w + tail);
  if (!dir_trusted(dir_of(real), uid, &why)) return untrusted(why + tail);
  struct stat lst {};
  if (::lstat(path.c_str(), &lst) == 0 && S_ISLNK(lst.st_mode)) {
    // The link itself can be replaced by whoever can write its directory.
    char link_dir[PATH_MAX];
    if (!::realpath(dir_of(path).c_str(), link_dir))
      return untrusted(std::string("cannot resolve the link's directory: ") + std::strerror(errno));
    if (!dir_trusted(link_dir, uid, &why)) return untrusted(why + " (it holds the symbolic link)" + tail);
  }
  return true;
}

}  // namespace duet::plugin
