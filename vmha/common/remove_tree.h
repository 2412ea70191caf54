// Removing a directory tree that someone else's program wrote: no link is
// followed, any depth is removed with a bounded number of open directories
// (a directory deeper than that is moved up to the top one first), and a
// directory its owner made read-only is made writable on the way.
#pragma once
#include <string>

namespace vmha {

// Removes `name` beneath the directory parent_fd, and everything in it.
// True when it is gone (or was not there); otherwise false and the first
// problem in *error ("PATH: reason", PATH under `where`).
bool remove_tree(int parent_fd, const std::string& name, const std::string& where, std::string* error);

}  // namespace vmha
