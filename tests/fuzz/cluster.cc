// Fuzz target: the cluster reader (duet-cluster(5)). InputError is the
// documented answer to bad input; a crash or any other exception is a finding.
#include <sstream>
#include <string>

#include "policy/io/cluster.h"
#include "policy/io/csv.h"
#include "tests/fuzz/fuzz_target.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::istringstream in(std::string(reinterpret_cast<const char*>(data), size));
  try {
    duet::ClusterSpec c = duet::read_cluster(in, "fuzz");
    (void)c.total_gpus();
    std::ostringstream out;
    duet::write_cluster(out, c);
  } catch (const duet::InputError&) {}
  return 0;
}
