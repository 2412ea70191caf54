// ElfImage: a checked description of an x86-64 ELF executable (static,
// static-pie or dynamically linked) or of a program interpreter (ld.so).
// Parsing needs no KVM, so malformed programs are refused before a VM exists.
#pragma once
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "vmha/common/status.h"

namespace vmha {

struct ElfSegment {
  uint64_t vaddr = 0, memsz = 0, offset = 0, filesz = 0;
  uint32_t flags = 0;  // PF_R / PF_W / PF_X
};

struct ElfImage {
  std::vector<uint8_t> bytes;  // the whole file
  bool pie = false;            // ET_DYN: loaded at a base the loader chooses
  std::string interpreter;     // PT_INTERP ("" for a static program)
  uint64_t entry = 0;          // before relocation by the load base
  uint64_t phoff = 0;
  uint16_t phnum = 0, phentsize = 0;
  std::vector<ElfSegment> segments;  // PT_LOAD only
};

// Checks every header field the loader relies on. `name` is used in messages.
Status parse_elf(std::vector<uint8_t> bytes, const std::string& name, ElfImage* out);
Status read_elf_file(const std::string& path, ElfImage* out);
// Reads the whole file behind `fd` (not closed); `name` is used in messages.
Status read_elf_fd(int fd, const std::string& name, ElfImage* out);

}  // namespace vmha
