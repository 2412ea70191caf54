// The guest process's virtual address space as the VMM lays it out (Linux's
// x86-64 layout): where the stack, the mmap area and a static-pie program go,
// the top of user space, and the page helpers every mapping call uses.
#pragma once
#include <cstdint>

#include "vmha/common/x86.h"

namespace vmha::layout {

// The layout is in x86's units: code that says `using namespace layout`
// reads kPageSize and the PTE bits unqualified.
using namespace x86;

inline constexpr uint64_t page_down(uint64_t a) { return a & kPageMask; }
// Wraps to 0 above kPageMask: check rounds_up() first for guest values.
inline constexpr uint64_t page_up(uint64_t a) { return (a + kPageSize - 1) & kPageMask; }
inline constexpr bool rounds_up(uint64_t a) { return a <= kPageMask; }
// [start, start + len) lies below `top` (no wrap-around).
inline constexpr bool fits_below(uint64_t start, uint64_t len, uint64_t top) {
  return start <= top && len <= top - start;
}

// A bit the CPU ignores (bit 9), used by the VMM: a frame is assigned.
constexpr uint64_t kPteBacked = 1ull << 9;

// The guest process.
constexpr uint64_t kStackTop = 0x7ffffffff000ull;
constexpr uint64_t kStackSize = 8ull << 20;
constexpr uint64_t kMmapTop = 0x7fffe0000000ull;
constexpr uint64_t kMmapBottom = 0x10000ull;
constexpr uint64_t kPieBase = 0x555555554000ull;  // static-pie load address
constexpr uint64_t kUserTop = 0x800000000000ull;

}  // namespace vmha::layout
