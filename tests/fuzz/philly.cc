// Fuzz target: the Philly trace reader (policy/io/philly.h), whole trace and
// an evaluation-style time window. The reader takes a path, so the input goes
// through an in-memory file. InputError is the documented answer to bad input.
#include "policy/io/csv.h"
#include "policy/io/philly.h"
#include "tests/fuzz/fuzz_target.h"
#include "tests/fuzz/mem_file.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static fuzz::MemFile file;
  const std::string& path = file.set(data, size);
  try {
    (void)duet::read_philly(path);
  } catch (const duet::InputError&) {}
  try {
    // 2017-10-01 .. 2017-11-01 UTC: inside the published trace's span.
    (void)duet::read_philly(path, duet::TimeWindow{1506816000, 1509494400});
  } catch (const duet::InputError&) {}
  return 0;
}
