// The node speeds CSV, read by the plugins (duet.conf(5) NodeSpeedsFile) and
// by duet convert sacct and slurm-nodes (--node-speeds): a header row naming
// at least the columns `node` and `speed` (other columns, e.g. gpu_type and
// num_gpus of the test cluster's nodes.csv, are ignored), then one row per
// node, each node once, speed from kMinSpeed to kMaxSpeed (policy/io/limits.h;
// higher is faster).
#pragma once

#include <cstdint>
#include <istream>
#include <map>
#include <string>

namespace duet {

// node -> speed factor.
using NodeSpeeds = std::map<std::string, double>;

// Largest node speeds file read (a speeds file lists nodes, not jobs).
inline constexpr std::uint64_t kMaxNodeSpeedsBytes = std::uint64_t{16} << 20;  // 16 MiB

// Both throw InputError ("file:line:column: what was expected", policy/io/csv.h).
NodeSpeeds read_node_speeds(const std::string& path);
// `name` is used in messages.
NodeSpeeds parse_node_speeds(std::istream& in, const std::string& name);

}  // namespace duet
