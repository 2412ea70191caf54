// Fixed numbers of the process VM: segment selectors, the I/O ports the
// guest uses to reach the VMM, the VMM's own pages, the guest memory sizes
// vmha accepts and KVM ioctl numbers; the guest process's layout and page
// helpers come from vmha/mem/guest_layout.h, hardware numbers from
// vmha/common/x86.h (both visible as layout::).
#pragma once
#include <linux/ioctl.h>

#include <cstdint>

#include "vmha/mem/guest_layout.h"

namespace vmha::layout {

// Ports allowed by the TSS I/O bitmap: the syscall stub and the exception
// stubs `out` to them, which exits to the VMM (KVM_EXIT_IO).
constexpr uint16_t kSyscallPort = 0x10;
constexpr uint16_t kExceptionPort = 0x11;

// Segment selectors (Linux's layout, so SYSRET-style values are familiar).
constexpr uint16_t kKernelCs = 0x08;
constexpr uint16_t kKernelDs = 0x10;
constexpr uint16_t kUser32Cs = 0x23;
constexpr uint16_t kUserDs = 0x2b;
constexpr uint16_t kUserCs = 0x33;
constexpr uint16_t kTss = 0x40;

// The VMM's own pages live in the top 512 GiB of the address space.
constexpr uint64_t kKernelBase = 0xffffff8000000000ull;
constexpr uint64_t kGdtVa = kKernelBase + 0x0000;
constexpr uint64_t kIdtVa = kKernelBase + 0x1000;
constexpr uint64_t kTssVa = kKernelBase + 0x2000;
constexpr uint64_t kSyscallStubVa = kKernelBase + 0x3000;  // user-executable
constexpr uint64_t kExceptionStubVa = kKernelBase + 0x4000;
constexpr uint64_t kKernelStackVa = kKernelBase + 0x6000;  // two pages
constexpr uint64_t kKernelStackTop = kKernelBase + 0x8000;
constexpr uint64_t kKernelPages = 8;
// Helper vCPU k (1..15, helper_vcpus.h) has its own copy of the TSS at
// kTssVa + k * kHelperTssStride, whose RSP0 is kKernelStackTop - k *
// kHelperStackSlot: exceptions on two vCPUs at once never share a frame.
constexpr uint64_t kHelperTssStride = 256;
constexpr uint64_t kHelperStackSlot = 512;

// Guest memory sizes vmha accepts (`vmha run --memory`, Vm::create, VM
// states): room for the page tables, a program and its stack, up to 1 TiB.
constexpr uint64_t kMinMemoryMib = 16;
constexpr uint64_t kMaxMemoryMib = 1ull << 20;

// KVM ioctls on structs that end in a flexible array: in C++ the kernel
// headers' __DECLARE_FLEX_ARRAY adds a member and moves the array (sizeof
// kvm_msrs is 16, not 8), so vmha uses its own fixed-size layouts
// (KvmMsrList, KvmCpuidList in vm.h) and spells the ioctl numbers out.
constexpr unsigned long kKvmGetSupportedCpuid = _IOC(_IOC_READ | _IOC_WRITE, 0xae, 0x05, 8);
constexpr unsigned long kKvmSetCpuid2 = _IOC(_IOC_WRITE, 0xae, 0x90, 8);
constexpr unsigned long kKvmGetMsrs = _IOC(_IOC_READ | _IOC_WRITE, 0xae, 0x88, 8);
constexpr unsigned long kKvmSetMsrs = _IOC(_IOC_WRITE, 0xae, 0x89, 8);
constexpr unsigned long kKvmGetXsave = _IOC(_IOC_READ, 0xae, 0xa4, 4096);
constexpr unsigned long kKvmSetXsave = _IOC(_IOC_WRITE, 0xae, 0xa5, 4096);

}  // namespace vmha::layout
