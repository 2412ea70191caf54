// Fixed numbers of the process VM: guest virtual layout, segment selectors,
// the I/O ports the guest uses to reach the VMM, and page-table bits.
#pragma once
#include <linux/ioctl.h>

#include <cstdint>

namespace vmha::layout {

constexpr uint64_t kPageSize = 4096;
constexpr uint64_t kPageMask = ~(kPageSize - 1);
inline constexpr uint64_t page_down(uint64_t a) { return a & kPageMask; }
// Wraps to 0 above kPageMask: check rounds_up() first for guest values.
inline constexpr uint64_t page_up(uint64_t a) { return (a + kPageSize - 1) & kPageMask; }
inline constexpr bool rounds_up(uint64_t a) { return a <= kPageMask; }
// [start, start + len) lies below `top` (no wrap-around).
inline constexpr bool fits_below(uint64_t start, uint64_t len, uint64_t top) { return start <= top && len <= top - start; }

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

// The guest process.
constexpr uint64_t kStackTop = 0x7ffffffff000ull;
constexpr uint64_t kStackSize = 8ull << 20;
constexpr uint64_t kMmapTop = 0x7fffe0000000ull;
constexpr uint64_t kMmapBottom = 0x10000ull;
constexpr uint64_t kPieBase = 0x555555554000ull;  // static-pie load address
constexpr uint64_t kUserTop = 0x800000000000ull;

// Guest memory sizes vmha accepts (`vmha run --memory`, Vm::create, VM
// states): room for the page tables, a program and its stack, up to 1 TiB.
constexpr uint64_t kMinMemoryMib = 16;
constexpr uint64_t kMaxMemoryMib = 1ull << 20;

// Page-table entry bits.
constexpr uint64_t kPtePresent = 1ull << 0;
constexpr uint64_t kPteWrite = 1ull << 1;
constexpr uint64_t kPteUser = 1ull << 2;
constexpr uint64_t kPteAccessed = 1ull << 5;
constexpr uint64_t kPteDirty = 1ull << 6;
constexpr uint64_t kPteBacked = 1ull << 9;  // software bit: a frame is assigned
constexpr uint64_t kPteNoExec = 1ull << 63;
constexpr uint64_t kPteFrame = 0x000ffffffffff000ull;

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
