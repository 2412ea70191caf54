// RemovedFiles: files the guest removed while a backup may still resume from
// a checkpoint that has them open.
//
// A checkpoint names an open file by its path (state/fd_codec.cc reopens it
// there). Output commit holds the guest's writes until their epoch is
// acknowledged, but file-system changes happen at once: a program that
// creates a temporary file, keeps it open and unlinks it (sort's spill
// files, tmpfile()) leaves the backup a checkpoint whose descriptor names a
// path that is gone, and the takeover cannot reopen it.
//
// So while a backup protects the run, unlink (and rename over an existing
// file) does not free the file: its name moves into a holding directory,
// the run's holding directory in vmha's directory at the top of the working
// directory (confinement.h's kStateDir: .vmha/<run id>/removed), under the
// name of its inode number. The guest sees Linux's semantics: the name is gone at once
// (stat fails, the name can be created anew, listings do not show it), the
// open descriptors still work. The holding directory is outside the guest's
// policy: no path reaches it, listings of the working directory omit it.
// The tree's descriptors of the file now name the held path, so later
// checkpoints and their held writes refer to it; a checkpoint from before
// the unlink still names the old path, and records the inode with it: a
// restore that finds another file (or none) there opens the held one.
//
// A held file is deleted once no checkpoint the backup could resume from
// refers to it: when a checkpoint finds no descriptor of the tree on it,
// that checkpoint's acknowledgement deletes it (the backup resumes from
// that checkpoint or a later one, none of which can name the file again).
// A backup that takes over deletes the held files its checkpoint's
// descriptors have open, once it has reopened them and re-applied the held
// writes: it runs without a backup, and open descriptors keep the files
// alive (delete_held_files). A
// run without a backup deletes at once, as before.
//
// Not held: rmdir (an open directory that is removed cannot be reopened by
// a takeover; it fails as before), and a name the guest removes that
// another hard link still keeps (it is held all the same, harmless).
#pragma once
#include <sys/types.h>

#include <cstdint>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <utility>

namespace vmha {

class ProcessTree;
class Confinement;

// The holding directory of a run (working-directory-relative, inside
// kStateDir, which the guest cannot name; .vmha/removed for a run without
// an id). A backup that takes over a run owns it, and removes it with the
// run's private directories at the end.
std::string holding_dir(const std::string& run_id);
// The held path of inode `ino` (working-directory-relative).
std::string held_path(const std::string& run_id, ino_t ino);

class RemovedFiles {
 public:
  // Whether removed files are held (a backup protects the run). Turning it
  // off deletes what is held: nothing will resume from a checkpoint.
  void keep(bool on, const Confinement& root);
  bool keeping() const;
  // unlinkat(parent, base, 0) for the guest of `tree`: 0 or -errno.
  long unlink(ProcessTree& tree, const Confinement& root, int parent, const std::string& base);
  // Before a rename over parent/base: the file there (a regular file the
  // guest may have open) is linked into the holding directory first. 0, or
  // -errno when it could not be (the rename then fails with it).
  long hold_target(ProcessTree& tree, const Confinement& root, int parent, const std::string& base);
  // A checkpoint of `tree` (the guest paused): held files no descriptor
  // refers to are deleted when it is acknowledged.
  void checkpointed(const ProcessTree& tree, uint64_t epoch);
  // The backup acknowledged `epoch`; `finished`: the guest had ended.
  void acknowledged(uint64_t epoch, bool finished, const Confinement& root);

 private:
  // Links parent/base into the holding directory; 0 or -errno (-ENOENT etc.
  // as the host says; 1 when base is not a regular file: nothing to hold).
  long hold(ProcessTree& tree, const Confinement& root, int parent, const std::string& base);

  mutable std::mutex mu_;
  bool keep_ = false;
  // Held inodes -> the checkpoint after which nothing refers to them (0: not yet).
  std::map<ino_t, uint64_t> held_;
};

// After a takeover restored its tree and re-applied its held writes: the
// held files its restored descriptors have open are deleted (the
// descriptors keep them alive), and the holding directory once it is empty.
// Only those: the tasks of one step share a working directory, and another
// task's backup may still need what that task holds. A file this task held
// that its checkpoint no longer refers to stays (its primary died before
// the acknowledgement that would have deleted it).
void delete_held_files(const ProcessTree& tree, const Confinement& root);
// The same for the files (device, inode) a tree has open: those on the
// working directory's file system.
using FileId = std::pair<dev_t, ino_t>;
void delete_held_inodes(int root_fd, const std::string& run_id, const std::set<FileId>& open);

}  // namespace vmha
