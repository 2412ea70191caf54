// The test cluster's per-node description (nodes.csv, written by
// contrib/testcluster up): header node,gpu_type,num_gpus,speed (an optional
// rack column is allowed). `speed` is the node's persistent speed factor s_m
// of the performance model (1 = a typical machine of its type).
#pragma once

#include <string>
#include <vector>

namespace duet::replay {

struct EmuNode {
  std::string name, gpu_type, rack;
  int gpus = 0;
  double speed = 1;
  int line = 0;
};

// Throws InputError (file, line, column) on a malformed file.
std::vector<EmuNode> read_nodes_csv(const std::string& path);
const EmuNode* find_node(const std::vector<EmuNode>& nodes, const std::string& name);

// nodes.csv for the cluster of $SLURM_CONF: next to slurm.conf or one
// directory up (testcluster puts slurm.conf in DIR/etc, nodes.csv in DIR).
// "" when SLURM_CONF is unset or neither exists.
std::string nodes_csv_from_slurm_conf();

// Slurm hostlist expression ("node[1-3,7],gpu01") to names
// (policy/util/hostlist.h). Throws std::invalid_argument naming the column on
// a malformed expression or one past that reader's limits.
std::vector<std::string> expand_hostlist(const std::string& expr);

}  // namespace duet::replay
