// Fuzz target: the Alibaba PAI machine list reader (policy/io/pai.h), then the
// sampler on what it accepted. The reader takes a path, so the input goes
// through an in-memory file. InputError is the documented answer to bad input.
#include "policy/io/csv.h"
#include "policy/io/pai.h"
#include "tests/fuzz/fuzz_target.h"
#include "tests/fuzz/mem_file.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static fuzz::MemFile file;
  try {
    duet::PaiResult r = duet::read_pai(file.set(data, size));
    (void)duet::sample_cluster(r.cluster, 0.5, 1);
  } catch (const duet::InputError&) {}
  return 0;
}
