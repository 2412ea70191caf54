// ElfImage: a checked description of a static x86-64 ELF executable. Parsing
// needs no KVM, so malformed and dynamic programs are refused before a VM exists.
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
  bool pie = false;            // static-pie (ET_DYN without an interpreter)
  uint64_t entry = 0;          // before relocation by the load base
  uint64_t phoff = 0;
  uint16_t phnum = 0, phentsize = 0;
  std::vector<ElfSegment> segments;  // PT_LOAD only
};

// Checks every header field the loader relies on. `name` is used in messages.
Status parse_elf(std::vector<uint8_t> bytes, const std::string& name, ElfImage* out);
Status read_elf_file(const std::string& path, ElfImage* out);

}  // namespace vmha
