// Fuzz target: a site's sacct history (`duet convert sacct`): parse_sacct_allocations,
// then trace_from_sacct without and with node speeds (host lists, requeued runs,
// GPU counts and types from AllocTRES/ReqTRES), then write_trace. InputError is the documented answer to
// bad input; a crash, any other exception, or a trace that read_trace refuses
// when read back is a finding: the converter must write only duet-trace(5).
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>

#include "policy/io/csv.h"
#include "policy/io/trace.h"
#include "replay/sacct.h"
#include "replay/sacct_trace.h"
#include "tests/fuzz/fuzz_target.h"

namespace {

// Run times as measured, or scaled by node speeds (which expands NodeList).
void convert(const duet::replay::SacctRows& rows, bool with_speeds) {
  duet::replay::SacctTraceOptions opt;
  if (with_speeds) opt.speeds = {{"node1", 1.0}, {"node2", 0.5}, {"node3", 2.0}, {"gpu01", 0.3}, {"gpu02", 1.7}};
  duet::Trace t;
  try {
    duet::replay::SacctTraceCounts counts;
    t = duet::replay::trace_from_sacct(rows.jobs, "fuzz", opt, counts);
  } catch (const duet::InputError&) { return; }
  std::ostringstream out;
  duet::write_trace(out, t);
  std::istringstream back(out.str());
  try {
    if (duet::read_trace(back, "written back").jobs.size() != t.jobs.size()) std::abort();
  } catch (const duet::InputError& e) {
    std::fprintf(stderr, "the converted trace does not read back: %s\n", e.what());
    std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::istringstream in(std::string(reinterpret_cast<const char*>(data), size));
  duet::replay::SacctRows rows;
  try {
    rows = duet::replay::parse_sacct_allocations(in, "fuzz");
  } catch (const duet::InputError&) { return 0; }
  convert(rows, false);
  convert(rows, true);
  return 0;
}
