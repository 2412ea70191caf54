// Confinement: the guest's view of the host's files is a policy. Its working
// directory is read-write; a list of system paths is read-only (the guest
// may open, stat, read, list and readlink there, never write, create,
// remove, rename, chmod or truncate: EROFS); /tmp and /dev/shm are private
// directories of the run inside the working directory (below); nothing else
// is reachable (EACCES), except a few harmless devices allowed by exact name
// and the metadata of the directories above the roots (stat answers as
// Linux does, nothing is listed or opened: sqlite lstat()s every ancestor of
// its database's path, realpath() reads them as links).
//
// Private directories: guest /tmp and /dev/shm are served from
// .vmha/<run id>/tmp and .../shm beneath the working directory (kStateDir):
// writable, replicated and re-applied like any file of the working
// directory (their paths are recorded working-directory-relative), removed
// when the run ends. The run id travels in the VM state, so a backup that
// resumes the guest serves the same directories. The guest cannot name
// kStateDir through its working directory, except its own private
// directories (listings omit it; removed_files.h holds removed files there).
//
// Each process has its own working directory (chdir, fchdir): a directory fd
// beneath one of the roots, against which relative paths resolve.
//
// A path is resolved beneath one root: the working directory for relative
// paths, else the root whose path is the longest component-wise prefix of
// the absolute path (a prefix ends at the first `.` or `..` component). The
// rest is resolved by openat2 with RESOLVE_BENEATH beneath that root's fd,
// so `..`, absolute symlinks and magic links cannot lead out of it. Where
// such a resolution would leave its root (an absolute symlink like Debian's
// /lib64/ld-linux-x86-64.so.2 -> /lib/x86_64-linux-gnu/..., a `..` above
// it), the path's symlinks are expanded one by one, each read through the
// policy, and the final target is located afresh: allowed when it lands
// inside the policy, EACCES otherwise (confinement_links.cc).
#pragma once
#include <string>
#include <vector>

#include "vmha/common/status.h"

namespace vmha {

// vmha's own directory at the top of the working directory: removed files
// held for a backup (removed_files.h) and each run's private directories.
inline constexpr const char* kStateDir = ".vmha";
// A guest path served from a private directory of the run (kStateDir/<run id>/name).
struct PrivateDir {
  const char* guest;
  const char* name;
};
inline constexpr PrivateDir kPrivateDirs[] = {{"/tmp", "tmp"}, {"/dev/shm", "shm"}};
// vmha's directory of a run: kStateDir/<run id> (kStateDir for none).
inline std::string run_state_dir(const std::string& run_id) {
  return run_id.empty() ? std::string(kStateDir) : std::string(kStateDir) + "/" + run_id;
}
// A fresh run id: 16 hex digits from getrandom.
std::string new_run_id();
// OK for a run id as new_run_id() makes them (and a state may carry).
bool valid_run_id(const std::string& id);

// vmha/common/settings.h's kDefaultReadOnlyPaths as a list.
std::vector<std::string> default_read_only_paths();
// "A:B:C" -> {A, B, C} (empty entries dropped).
std::vector<std::string> split_path_list(const std::string& list);
// OK when `path` can name a read-only root: absolute, no `.` or `..`
// component; otherwise an error that says so.
Status check_read_only_path(const std::string& path);

// Where a guest path points: a host directory fd (not owned by the caller),
// a path beneath it, and whether the policy allows writing there.
struct Located {
  int dir = -1;
  std::string rel;
  bool read_only = false;
  std::string recorded;  // working-directory-relative, or absolute under a read-only root
};

class Confinement {
 public:
  ~Confinement();
  Confinement() = default;
  Confinement(const Confinement&) = delete;
  Confinement& operator=(const Confinement&) = delete;

  // The working directory and the read-only roots. A read-only path that
  // does not exist on the host is skipped; one inside the working directory
  // adds nothing (the working directory is read-write throughout). With a
  // run id, the private directories too (set_private).
  Status open_root(const std::string& dir, const std::vector<std::string>& read_only = {},
                   const std::string& run_id = "");
  // The same policy and working directory as `other` (a forked child's).
  Status open_like(const Confinement& other);
  int root_fd() const { return root_fd_; }
  const std::string& root_path() const { return root_path_; }
  // The read-only roots in force (as the guest names them).
  std::vector<std::string> read_only_paths() const;

  // Private directories (above): created beneath the working directory when
  // missing; "" serves none (/tmp is then outside the policy).
  Status set_private(const std::string& run_id);
  const std::string& run_id() const { return run_id_; }
  // Removes this run's private directories, whatever they hold (no link is
  // followed, any depth), and kStateDir when nothing else is left in it.
  void remove_private() const;
  // Whether a working-directory-relative path lies in kStateDir outside this
  // run's private directories (lexically: `.` and `..` resolved): the guest
  // may not name it.
  bool reserved(const std::string& recorded) const;

  // The process's working directory: a directory as locate() found it.
  // 0 or -errno (ENOTDIR).
  int change_dir(const Located& dir);
  int cwd_fd() const { return cwd_fd_ >= 0 ? cwd_fd_ : root_fd_; }
  const Located& cwd() const { return cwd_; }
  // The absolute path the guest sees for a recorded path (getcwd, /proc links).
  std::string guest_path(const std::string& recorded, bool read_only) const;
  // An absolute path (no `.` or `..`) that names a directory above a root
  // (/, /home, /tmp's parent...): the host path whose metadata stat shows.
  bool above_root(const std::string& path) const;

  // An absolute guest path: the root it lies under and the rest. -EACCES
  // outside the policy. Relative paths are returned beneath the working
  // directory of the process.
  int locate(const std::string& path, Located* out) const;
  static bool is_allowed_device(const std::string& path);

  // Whether resolving rel beneath dir_fd would leave it (above). The last
  // component is followed when follow_last.
  bool leaves_root(int dir_fd, const std::string& rel, bool follow_last) const;
  // An absolute path with its symlinks expanded (above), then located as
  // locate() does. -EACCES outside the policy, -ELOOP after 40 links,
  // -ENOENT / -ENOTDIR for a missing directory on the way.
  int locate_following(const std::string& path, bool follow_last, Located* out) const;
  // The absolute path a Located names.
  std::string absolute(const Located& l) const;
  // Opens `path` for reading as the guest's open(path, O_RDONLY) would (the
  // program interpreter, say). A host fd or -errno.
  int open_for_reading(const std::string& path) const;

  // openat2 beneath dir_fd (a host fd that is a root or a directory under
  // it). Returns a host fd or -errno (escapes give -EACCES).
  int open_beneath(int dir_fd, const std::string& rel, int flags, unsigned mode) const;
  // Opens the parent directory of rel beneath dir_fd; *base gets the last
  // component. Returns a host fd (O_PATH) or -errno.
  int open_parent(int dir_fd, const std::string& rel, std::string* base) const;
  // Opens rel beneath dir_fd under a read-only root for reading as the
  // guest asked (`flags`: its open flags). Write access, O_TRUNC, O_TMPFILE
  // and creating give -EROFS (O_CREAT|O_EXCL of an existing file -EEXIST);
  // only regular files and directories are opened (O_PATH: anything), else
  // -EACCES. The object is checked through an O_PATH fd and reopened from
  // it, so what is opened is what was checked.
  int open_read_only(int dir_fd, const std::string& rel, int flags) const;

 private:
  // A directory is resolved beneath its own fd; a file beneath its
  // directory's, by its real name (a file has nothing beneath it).
  struct ReadOnlyRoot {
    std::string path;  // as the guest names it (no trailing '/')
    int fd = -1;       // O_PATH: the directory, or the directory holding the file
    std::string name;  // "" for a directory; the file's real name
    std::string real;  // the host path it names (its target, where path is a symlink)
  };
  // Expands the symlinks of an absolute path (locate_following).
  int expand_links(const std::string& path, bool follow_last, std::string* out) const;
  // 1 and *target when the absolute path names a symlink the policy lets the
  // guest read, 0 when it names something else or lies outside the roots,
  // -errno when it cannot be looked at (ENOENT: nothing there).
  int read_link(const std::string& path, std::string* target) const;
  // openat2 with RESOLVE_BENEATH: a host fd, or -1 with errno (EXDEV: would leave dir_fd).
  long openat2_beneath(int dir_fd, const std::string& rel, int flags, unsigned mode) const;
  // A private directory: the guest path and its recorded (working-directory-relative) path.
  struct PrivateRoot {
    std::string guest;
    std::string recorded;
    int fd = -1;
  };
  void close_private();
  int root_fd_ = -1;
  std::string root_path_;
  std::vector<ReadOnlyRoot> read_only_;
  std::string run_id_;
  std::vector<PrivateRoot> private_;
  // The process's working directory ({-1, "."}: the root).
  int cwd_fd_ = -1;
  Located cwd_{-1, ".", false, "."};
};

}  // namespace vmha
