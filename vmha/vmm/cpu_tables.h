// The guest's descriptor tables and the VMM's few instructions of "kernel":
// GDT, IDT, TSS with its I/O bitmap, the syscall entry stub and the exception
// stubs. Each stub is an `out` to a port the I/O bitmap allows, so the VMM
// gets control on the next instruction (KVM_EXIT_IO) and CPL0 code that this
// host must emulate stays a handful of instructions.
#pragma once
#include <linux/kvm.h>

#include <cstdint>

#include "vmha/mem/guest_memory.h"
#include "vmha/mem/page_table.h"

namespace vmha {

// Guest physical address of the first of layout::kKernelPages frames.
struct CpuTables {
  uint64_t first_frame = 0;
  uint64_t kernel_stack_gpa(uint64_t va) const;  // for reading exception frames
};

// What an exception stub leaves on its stack: the vector, then the CPU's
// frame (error code, rip, cs, rflags, rsp, ss).
struct ExceptionFrame {
  uint64_t vector = 0, error = 0, rip = 0, cs = 0, rflags = 0, rsp = 0, ss = 0;
};

// The frame at rsp, if [rsp, rsp + frame) lies within [stack_lo, stack_hi).
bool read_exception_frame(const GuestMemory& mem, const CpuTables& tables, uint64_t rsp, uint64_t stack_lo,
                          uint64_t stack_hi, ExceptionFrame* out);

// A flat 64-bit user code (code) or data segment with the given selector:
// what the guest's user code runs with on every vCPU.
kvm_segment user_segment(uint16_t selector, bool code);

bool install_cpu_tables(GuestMemory& mem, PageTable& pt, CpuTables* out);

// Vectors whose exception frames carry an error code.
bool vector_has_error_code(int vector);

}  // namespace vmha
