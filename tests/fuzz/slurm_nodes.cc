// Fuzz target: `scontrol show nodes --oneliner` (`duet convert slurm-nodes`):
// parse_scontrol_nodes, then cluster_from_slurm_nodes, then write_cluster and
// write_node_speeds. InputError is the documented answer to bad input; a
// crash, any other exception, or a cluster or speeds file that its own
// reader refuses when read back is a finding.
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>

#include "policy/io/cluster.h"
#include "policy/io/csv.h"
#include "policy/io/node_speeds.h"
#include "replay/slurm_nodes.h"
#include "tests/fuzz/fuzz_target.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::istringstream in(std::string(reinterpret_cast<const char*>(data), size));
  duet::replay::SlurmNodesResult r;
  try {
    const auto nodes = duet::replay::parse_scontrol_nodes(in, "fuzz");
    r = duet::replay::cluster_from_slurm_nodes(nodes, "fuzz", duet::replay::SlurmNodesOptions{});
  } catch (const duet::InputError&) { return 0; }
  std::ostringstream cluster, speeds;
  duet::write_cluster(cluster, r.cluster);
  duet::replay::write_node_speeds(speeds, r);
  std::istringstream cluster_back(cluster.str()), speeds_back(speeds.str());
  try {
    if (duet::read_cluster(cluster_back, "cluster written back").machines.size() != r.cluster.machines.size())
      std::abort();
    (void)duet::parse_node_speeds(speeds_back, "speeds written back");
  } catch (const duet::InputError& e) {
    std::fprintf(stderr, "the converted cluster does not read back: %s\n", e.what());
    std::abort();
  }
  return 0;
}
