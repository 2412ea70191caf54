// Fuzz target: the ELF checks and, for an image they accept, the program
// loader into a guest address space (no KVM needed: guest memory and page
// tables are plain host memory). Refusals are Status errors; a crash is a finding.
#include <memory>
#include <string>
#include <vector>

#include "tests/fuzz/fuzz_target.h"
#include "vmha/mem/address_space.h"
#include "vmha/mem/guest_memory.h"
#include "vmha/mem/page_table.h"
#include "vmha/vmm/elf_image.h"
#include "vmha/vmm/program_loader.h"

namespace {
// Small enough to create per input, big enough for the 8 MiB stack and a
// modest program; larger segments fail cleanly with "memory exhausted".
constexpr std::uint64_t kGuestBytes = 32ull << 20;
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  vmha::ElfImage img;
  if (!vmha::parse_elf(std::vector<std::uint8_t>(data, data + size), "fuzz", &img).ok()) return 0;
  std::unique_ptr<vmha::GuestMemory> mem;
  if (!vmha::GuestMemory::create(kGuestBytes, &mem).ok()) return 0;
  vmha::PageTable pt(*mem);
  if (!pt.init()) return 0;
  vmha::AddressSpace as(*mem, pt);
  vmha::LoadedProgram prog;
  // A dynamically linked image is loaded with itself as its interpreter:
  // the placement and second mapping run on fuzzed segments too.
  const vmha::ElfImage* interp = img.interpreter.empty() ? nullptr : &img;
  (void)vmha::load_program(img, interp, "fuzz", {"fuzz", "arg"}, {"HOME=/"}, 0, as, &prog);
  return 0;
}
