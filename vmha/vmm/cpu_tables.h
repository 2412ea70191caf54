// The guest's descriptor tables and the VMM's few instructions of "kernel":
// GDT, IDT, TSS with its I/O bitmap, the syscall entry stub and the exception
// stubs. Each stub is an `out` to a port the I/O bitmap allows, so the VMM
// gets control on the next instruction (KVM_EXIT_IO) and CPL0 code that this
// host must emulate stays a handful of instructions.
#pragma once
#include <cstdint>

#include "vmha/mem/guest_memory.h"
#include "vmha/mem/page_table.h"

namespace vmha {

// Guest physical address of the first of layout::kKernelPages frames.
struct CpuTables {
  uint64_t first_frame = 0;
  uint64_t kernel_stack_gpa(uint64_t va) const;  // for reading exception frames
};

bool install_cpu_tables(GuestMemory& mem, PageTable& pt, CpuTables* out);

// Vectors whose exception frames carry an error code.
bool vector_has_error_code(int vector);

}  // namespace vmha
