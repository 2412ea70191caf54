// What undoes each file-system change of the guest (output/undo_log.h): the
// prepare functions that the system calls changing the file system hand to
// OutputSink::change (or journal themselves, for a file they create). Each
// runs just before its change, on the host objects the call resolved: a
// parent directory and a name, or an open file. Paths in the steps are the
// objects' own, working-directory-relative (read from the parent's
// descriptor: no `..`, no symlink on the way); one outside the working
// directory journals nothing.
#pragma once
#include <string>

#include "vmha/output/output_sink.h"
#include "vmha/sys/confinement.h"

namespace vmha {

// A name about to be made (a file, directory, symlink or hard link):
// removed again, if it did not exist.
UndoPrepare undo_create(const Confinement& root, int parent, const std::string& base);
// A name about to be removed (unlink, rmdir): a regular file is linked back
// from where the tree's RemovedFiles holds it (removed_files.h), a symlink
// made again, a directory too.
UndoPrepare undo_remove(const Confinement& root, int parent, const std::string& base);
// rename(2) with its flags: moved back, and a file it replaces restored.
UndoPrepare undo_rename(const Confinement& root, int from_parent, const std::string& from_base, int to_parent,
                        const std::string& to_base, unsigned flags);
// The file behind fd about to get size `size` (ftruncate, O_TRUNC): what it
// loses is saved.
UndoPrepare undo_truncate(UndoLog& log, const Confinement& root, int fd, uint64_t size);
// Mode, owner and times of the object (parent, base), or of fd itself with
// base "": set back.
UndoPrepare undo_attributes(const Confinement& root, int parent, const std::string& base);

}  // namespace vmha
