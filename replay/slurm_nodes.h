// A Slurm cluster's nodes as a duet-cluster(5): reads `scontrol show nodes
// --oneliner` (one node a line, KEY=VALUE words; a value may hold spaces, as
// OS= does) and keeps what duet models: GPUs per type from Gres=gpu:TYPE:N,
// plus CPUs (CPUTot), memory (RealMemory, MB), Weight and features for the
// summary and the node speeds.
#pragma once

#include <cstdint>
#include <istream>
#include <map>
#include <string>
#include <vector>

#include "policy/io/cluster.h"
#include "replay/sacct_trace.h"

namespace duet::replay {

struct SlurmNode {
  std::string name;
  std::map<std::string, int> gpus_by_type;  // type as Slurm spells it
  int cpus = 0;
  int64_t memory_mb = 0;
  int64_t weight = 1;
  std::vector<std::string> features;  // AvailableFeatures (or Features)
  int line = 0;
};

// Throws InputError (name, line, column): a line without NodeName=, a GPU
// GRES without a type or count, a malformed number.
std::vector<SlurmNode> parse_scontrol_nodes(std::istream& in, const std::string& name);

struct SlurmNodesOptions {
  NodeSpeeds speeds;                          // known speeds (node -> factor)
  std::map<std::string, double> type_speeds;  // cluster `speed` per GPU type (upper case)
  // What is known of each GPU type (upper case) relative to a V100, for a
  // node no speeds file or feature gives: Gavel's table's mean
  // (gpu_type_mean_speed), or type_speeds where given.
  std::map<std::string, double> type_mean_speeds;
};

struct SlurmNodesResult {
  ClusterSpec cluster;
  // node,gpu_type,num_gpus,speed rows (contrib/testcluster's nodes.csv), one
  // per node with GPUs (gpu_type "A100|T4" for a node with two types); speed
  // from the known speeds, else a feature speed_X, else its GPU type's (the
  // slowest of a node's types, as a job's run time is normalised by its
  // slowest node), else 1 (the speed of the reference), with the node's
  // types in `unknown_types`.
  struct NodeSpeed {
    std::string node, gpu_type;
    int gpus = 0;
    double speed = 1;
  };
  std::vector<NodeSpeed> speeds;
  int cpu_only = 0, speeds_given = 0, speeds_from_features = 0, speeds_from_types = 0;
  std::vector<std::string> unknown_types;  // of nodes left at 1, each once
  int64_t cpus = 0, memory_mb = 0;  // over the nodes kept
};

// Machines in Slurm's allocation order: by Weight, then as listed. A node
// with two GPU types becomes one machine per type (NODE:TYPE, rack NODE).
SlurmNodesResult cluster_from_slurm_nodes(const std::vector<SlurmNode>& nodes, const std::string& name,
                                          const SlurmNodesOptions& opt);

void write_node_speeds(std::ostream& out, const SlurmNodesResult& r);

}  // namespace duet::replay
