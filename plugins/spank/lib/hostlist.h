// Slurm host lists ("node[1-3,7],gpu[01-02],login") expanded to names
// (policy/util/hostlist.h, the project's one reader), and the choice of the
// node that holds a task's backup.
#pragma once
#include <string>
#include <vector>

#include "policy/util/hostlist.h"

namespace vmha_spank {

using duet::expand_hostlist;

// The node of `nodes` (the allocation, in order) that holds the backup of a
// task on `self`: "next" is the node after self (wrapping around), "last"
// the last node that is not self. Empty when no other node exists.
std::string pick_backup_node(const std::vector<std::string>& nodes, const std::string& self, const std::string& policy);

}  // namespace vmha_spank
