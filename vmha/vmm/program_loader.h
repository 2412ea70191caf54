// Loads a checked ELF image (and its program interpreter, for a dynamically
// linked one) into the guest address space and builds the initial stack
// (argv, envp, auxv) the way Linux's execve does.
#pragma once
#include <string>
#include <vector>

#include "vmha/common/status.h"
#include "vmha/mem/address_space.h"
#include "vmha/sys/confinement.h"
#include "vmha/vmm/elf_image.h"

namespace vmha {

struct LoadedProgram {
  uint64_t entry = 0;
  uint64_t stack_pointer = 0;
};

// Reads program.interpreter through the policy, as the guest's open would
// (execve opens it as the process that runs it): one outside the policy is
// refused with a message that names it and says how to allow it.
Status read_interpreter(const Confinement& policy, const ElfImage& program, const std::string& exec_name,
                        ElfImage* out);

// `interp`: the image of image.interpreter (nullptr for a static program).
// A dynamically linked program starts at the interpreter's entry, with
// AT_BASE its load address and AT_ENTRY the program's; an ET_DYN program
// is loaded at layout::kPieBase (Linux's ELF_ET_DYN_BASE), the interpreter
// top-down in the mmap area, as the kernel places it.
Status load_program(const ElfImage& image, const ElfImage* interp, const std::string& exec_name,
                    const std::vector<std::string>& argv, const std::vector<std::string>& envp, uint64_t hwcap,
                    AddressSpace& as, LoadedProgram* out);

}  // namespace vmha
