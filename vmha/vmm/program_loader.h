// Loads a checked ELF image into the guest address space and builds the
// initial stack (argv, envp, auxv) the way Linux's execve does.
#pragma once
#include <string>
#include <vector>

#include "vmha/common/status.h"
#include "vmha/mem/address_space.h"
#include "vmha/vmm/elf_image.h"

namespace vmha {

struct LoadedProgram {
  uint64_t entry = 0;
  uint64_t stack_pointer = 0;
};

Status load_program(const ElfImage& image, const std::string& exec_name, const std::vector<std::string>& argv,
                    const std::vector<std::string>& envp, uint64_t hwcap, AddressSpace& as, LoadedProgram* out);

}  // namespace vmha
