// The vmha state directory, handled by root in slurmstepd and the epilog
// while users own what is inside it. Every operation goes through directory
// file descriptors (openat, O_NOFOLLOW), never through a path a user could
// have swapped for a symlink, and nothing is chowned through a path.
//
//   statedir/            root-owned, 0711: users reach their own job directory
//                        only, and cannot create, rename or plant anything here
//   statedir/jobJ/       created by root, then given to the job's owner (0700)
//   statedir/jobJ/...    the user's: read and removed as that user (fsuid)
#pragma once
#include <sys/types.h>

#include <cstdint>
#include <string>

namespace vmha_spank {

// An owned file descriptor (-1: none).
class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  Fd(Fd&& o) noexcept : fd_(o.release()) {}
  Fd& operator=(Fd&& o) noexcept;
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd();
  int get() const { return fd_; }
  int release() {
    int f = fd_;
    fd_ = -1;
    return f;
  }
  explicit operator bool() const { return fd_ >= 0; }

 private:
  int fd_ = -1;
};

// Opens the state directory, creating it (0711) if it does not exist. Refused
// with *error unless every component of its real path is a directory owned by
// root (the last one: by this process's euid) that only its owner can write,
// except sticky directories such as /tmp above it. `path` must be absolute.
Fd open_state_dir(const std::string& path, std::string* error);

// statedir/job<J>: created (0700, then fchown'd to uid:gid through its
// descriptor) or, for a later step of the same job, reopened; refused if it
// is anything but a directory owned by `uid` that nobody else can write.
Fd open_job_dir(int state_fd, const std::string& state_path, uint32_t job, uid_t uid, gid_t gid, std::string* error);

// Removes statedir/job<J> and everything in it. The user's tree is removed
// as its owner (fsuid) through directory descriptors, so a symlink planted or
// swapped in mid-way is unlinked, never followed. False with *error if
// something stayed; a missing directory is no error.
bool remove_job_dir(int state_fd, const std::string& state_path, uint32_t job, std::string* error);

// Runs file operations of this thread as uid:gid (setfsuid/setfsgid), and
// back on destruction. Only this thread is affected (slurmstepd has others).
class AsFileUser {
 public:
  AsFileUser(uid_t uid, gid_t gid);
  ~AsFileUser();
  AsFileUser(const AsFileUser&) = delete;
  AsFileUser& operator=(const AsFileUser&) = delete;

 private:
  uid_t old_uid_;
  gid_t old_gid_;
};

}  // namespace vmha_spank
