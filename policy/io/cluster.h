// Cluster format (man 5 duet-cluster): CSV with header
//   machine,gpu_type,num_gpus[,rack][,speed]
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

namespace duet {

struct MachineSpec {
  std::string name;
  std::string gpu_type;
  int gpus = 0;
  std::string rack;   // "" = its own rack
  double speed = -1;  // relative to the reference type; < 0 = from the throughput table
  int line = 0;
};

struct ClusterSpec {
  std::string source;
  std::vector<MachineSpec> machines;
  int total_gpus() const;
};

ClusterSpec read_cluster(const std::string& path);
ClusterSpec read_cluster(std::istream& in, const std::string& name);
void write_cluster(std::ostream& out, const ClusterSpec& c);

}  // namespace duet
