#include "vmha/common/remove_tree.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <vector>

namespace vmha {

namespace {

constexpr int kDirFlags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;
constexpr size_t kMaxOpen = 32;  // directories open at once; deeper ones are moved up
constexpr int kMaxPasses = 1 << 16;

void note(std::string* error, const std::string& what) {
  if (error && error->empty()) *error = what + ": " + std::strerror(errno);
}

}  // namespace

bool remove_tree(int parent_fd, const std::string& name, const std::string& where, std::string* error) {
  int top = openat(parent_fd, name.c_str(), kDirFlags);
  if (top < 0) {
    if (errno == ENOENT) return true;
    // Not a directory (a file, a symlink, which O_NOFOLLOW does not follow).
    if ((errno == ENOTDIR || errno == ELOOP) && (unlinkat(parent_fd, name.c_str(), 0) == 0 || errno == ENOENT))
      return true;
    return note(error, where), false;
  }
  fchmod(top, 0700);  // the owner may have made it read-only
  unsigned moved = 0;
  bool gone = false;
  for (int pass = 0; pass < kMaxPasses && !gone; ++pass) {
    struct Level {
      DIR* dir;
      std::string name;  // in the level above
    };
    std::vector<Level> stack;
    int again = dup(top);
    DIR* d = again >= 0 ? fdopendir(again) : nullptr;
    if (!d) {
      if (again >= 0) close(again);
      note(error, where);
      break;
    }
    rewinddir(d);  // the duplicate shares top's position
    stack.push_back({d, ""});
    while (!stack.empty()) {
      Level& l = stack.back();
      dirent* e = readdir(l.dir);
      if (!e) {
        std::string done = l.name;
        closedir(l.dir);
        stack.pop_back();
        if (!stack.empty() && unlinkat(dirfd(stack.back().dir), done.c_str(), AT_REMOVEDIR) != 0)
          note(error, where + "/" + done);
        continue;
      }
      if (!std::strcmp(e->d_name, ".") || !std::strcmp(e->d_name, "..")) continue;
      const int fd = dirfd(l.dir);
      struct stat st;
      if (fstatat(fd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
      if (!S_ISDIR(st.st_mode)) {
        if (unlinkat(fd, e->d_name, 0) != 0) note(error, where + "/" + e->d_name);
        continue;
      }
      if (stack.size() >= kMaxOpen) {
        char flat[64];
        std::snprintf(flat, sizeof flat, ".removing-%u", moved++);
        if (renameat(fd, e->d_name, top, flat) != 0) note(error, where + "/" + e->d_name);
        continue;  // removed from the top by a later pass
      }
      int sub = openat(fd, e->d_name, kDirFlags);
      DIR* sd = sub >= 0 ? fdopendir(sub) : nullptr;
      if (!sd) {
        if (sub >= 0) close(sub);
        note(error, where + "/" + e->d_name);
        continue;
      }
      fchmod(sub, 0700);
      stack.push_back({sd, e->d_name});
    }
    gone = unlinkat(parent_fd, name.c_str(), AT_REMOVEDIR) == 0 || errno == ENOENT;
    if (!gone && errno != ENOTEMPTY) {
      note(error, where);
      break;
    }
  }
  close(top);
  if (gone && error) error->clear();  // what failed on the way was removed after all
  return gone;
}

}  // namespace vmha
