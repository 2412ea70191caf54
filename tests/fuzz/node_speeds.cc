// Fuzz target: the node speeds reader (duet.conf(5) NodeSpeedsFile, read by
// select/duet and priority/duet in slurmctld; duet convert sacct and
// slurm-nodes --node-speeds).
// InputError is the documented answer to bad input; a crash, any other
// exception, or a speed outside the documented bounds is a finding.
#include <cstdlib>
#include <sstream>
#include <string>

#include "policy/io/csv.h"
#include "policy/io/limits.h"
#include "policy/io/node_speeds.h"
#include "tests/fuzz/fuzz_target.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::istringstream in(std::string(reinterpret_cast<const char*>(data), size));
  try {
    for (const auto& [node, speed] : duet::parse_node_speeds(in, "fuzz"))
      if (node.empty() || !(speed >= duet::kMinSpeed && speed <= duet::kMaxSpeed)) std::abort();
  } catch (const duet::InputError&) {}
  return 0;
}
