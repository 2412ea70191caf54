// Where unit suites find the source tree's files (data/, etc/, models/) and
// the throughput table most policy suites read: one definition instead of a
// copy in each suite. Include it before <check.h> (its fail() macro breaks
// <ios>).
#pragma once
#include <cstdlib>
#include <string>

#include "policy/model/gavel.h"

namespace test_support {

// REL below $top_srcdir, which `make check` sets (else the current directory).
inline std::string source_path(const std::string& rel) {
  const char* top = std::getenv("top_srcdir");
  return std::string(top ? top : ".") + "/" + rel;
}

// The Gavel throughput table in data/gavel, read once per suite.
inline const duet::ThroughputTable& gavel_table() {
  static const duet::ThroughputTable t = duet::read_gavel(source_path("data/gavel/simulation_throughputs.json"));
  return t;
}

}  // namespace test_support
