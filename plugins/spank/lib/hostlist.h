// Slurm host lists ("node[1-3,7],gpu[01-02],login") expanded to names, and
// the choice of the node that holds a task's backup.
#pragma once
#include <string>
#include <vector>

namespace vmha_spank {

// Expands a host list; false with *error (position and what was expected)
// on a malformed one.
bool expand_hostlist(const std::string& list, std::vector<std::string>* hosts, std::string* error);

// The node of `nodes` (the allocation, in order) that holds the backup of a
// task on `self`: "next" is the node after self (wrapping around), "last"
// the last node that is not self. Empty when no other node exists.
std::string pick_backup_node(const std::vector<std::string>& nodes, const std::string& self, const std::string& policy);

}  // namespace vmha_spank
