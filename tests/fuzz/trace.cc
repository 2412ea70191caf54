// Fuzz target: the job trace reader (duet-trace(5)). InputError is the
// documented answer to bad input; a crash or any other exception is a finding.
#include <sstream>
#include <string>

#include "policy/io/csv.h"
#include "policy/io/trace.h"
#include "tests/fuzz/fuzz_target.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::istringstream in(std::string(reinterpret_cast<const char*>(data), size));
  try {
    duet::Trace t = duet::read_trace(in, "fuzz");
    // What the reader accepted must survive the writer too.
    std::ostringstream out;
    duet::write_trace(out, t);
  } catch (const duet::InputError&) {}
  return 0;
}
