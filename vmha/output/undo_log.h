// UndoLog: the file-system changes of a protected guest since the last
// acknowledged checkpoint, each with the steps that undo it, journaled in a
// file of the working directory before the change is applied (write-ahead).
//
// File writes are held until the backup acknowledged their checkpoint
// (held_output.h), but a change of the namespace (a file created, unlinked
// or renamed, a directory made or removed, a truncation, a chmod) happens at
// once: the guest must see it. A backup that takes over resumes from a
// checkpoint that may come before some of them; it first undoes, newest
// first, every change of a later epoch (undo_changes_after), so that the
// files and the output it resumes with come from the same checkpoint and
// the guest, running those calls again, finds the file system as it was
// then: no second temporary file beside the first, no EEXIST, no journal of
// sqlite's gone from under it.
//
// Every step is conditional and idempotent: a change that was journaled and
// never applied (the primary died in between) leaves nothing to undo, and
// an undo interrupted half-way can run again. Paths are
// working-directory-relative and resolved beneath it (RESOLVE_BENEATH): the
// journal is a file the job's user can write, and undoing it does nothing
// that user could not do.
#pragma once
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "vmha/common/status.h"

namespace vmha {

struct UndoStep {
  enum class Kind : uint8_t {
    kRemove = 1,   // a: a path the change created: removed (rmdir for a directory) if there
    kLink,         // a: a held link to the file the change removed, b: its path: linked back when b is free
    kSymlink,      // a: the target of a symlink the change removed, b: its path: made again when b is free
    kMkdir,        // a: a directory the change removed, mode: made again when a is free
    kRename,       // a -> b when a is there and b is free: a rename b -> a undone
    kExchange,     // a <-> b (RENAME_EXCHANGE undone)
    kRestoreTail,  // a: a file truncated; b: the bytes cut off (from `offset`), or "": size back to `size`
    kAttributes,   // a: mode, uid, gid and times as they were
  };
  Kind kind = Kind::kRemove;
  std::string a, b;
  uint64_t mode = 0, uid = 0, gid = 0, offset = 0, size = 0;
  int64_t atime_ns = 0, mtime_ns = 0;
};

class UndoLog {
 public:
  ~UndoLog();
  // Journals into `dir` (working-directory-relative, made if missing; the
  // journal is dir/undo, saved bytes dir/undo-data/N) beneath root_fd.
  Status open(int root_fd, const std::string& dir);
  bool enabled() const;
  void close();
  // The epoch that changes belong to from now on (the checkpoint that will
  // cover them).
  void set_epoch(uint64_t epoch);
  // Journals a change before it is applied: prepare() makes what its undo
  // needs (a held link, saved bytes) and returns the steps. Written to the
  // file before this returns.
  void record(const std::function<std::vector<UndoStep>()>& prepare);
  // Copies bytes [from, to) of the file behind src_fd to a fresh file of the
  // journal's and returns its path (working-directory-relative); "" when it
  // could not (the change then has no undo for them).
  std::string save_bytes(int src_fd, uint64_t from, uint64_t to);
  // The backup acknowledged checkpoint `epoch`: no takeover resumes from
  // before it, so changes up to it need no undo.
  void acknowledged(uint64_t epoch);

 private:
  struct Entry {
    uint64_t epoch;
    std::vector<uint8_t> bytes;  // encoded steps
    std::vector<std::string> data;  // files of its own (saved bytes)
  };
  void rewrite();  // the file anew from entries_ (under mu_)
  std::string data_path();

  mutable std::mutex mu_;
  int root_fd_ = -1, fd_ = -1;
  std::string dir_;
  uint64_t epoch_ = 1, next_data_ = 0;
  std::vector<Entry> entries_;
};

// At a takeover from checkpoint `checkpoint`: undoes, newest first, the
// changes the journal in `dir` holds for later epochs. *undone: how many.
// An unreadable journal is an error (nothing is undone); a missing one
// means no change was made.
Status undo_changes_after(int root_fd, const std::string& dir, uint64_t checkpoint, size_t* undone);

}  // namespace vmha
