#include "vmha/vmm/cpu_tables.h"

#include <cstring>

#include "vmha/vmm/layout.h"

namespace vmha {

using namespace layout;

namespace {

constexpr int kVectors = 32;
constexpr uint32_t kIoBitmapBytes = 0x400 / 8;  // ports 0..0x3ff

void put64(uint8_t* p, uint64_t v) { std::memcpy(p, &v, 8); }

// Consecutive frames so the kernel area is one simple offset; *first is the
// first of them.
bool alloc_kernel_frames(GuestMemory& mem, uint64_t* first) {
  for (uint64_t i = 0; i < kKernelPages; ++i) {
    uint64_t f = mem.alloc_frame();
    if (!f) return false;
    if (i == 0) *first = f;
    if (f != *first + i * kPageSize) return false;  // called on a fresh allocator only
  }
  return true;
}

bool map_kernel_pages(PageTable& pt, uint64_t first) {
  for (uint64_t i = 0; i < kKernelPages; ++i) {
    uint64_t va = kKernelBase + i * kPageSize;
    uint64_t flags = kPtePresent | kPteNoExec;
    if (va == kSyscallStubVa)
      flags = kPtePresent | kPteUser;  // user-executable
    else if (va == kExceptionStubVa)
      flags = kPtePresent;  // kernel-executable
    else if (va >= kKernelStackVa || va == kTssVa)
      flags |= kPteWrite;
    if (!pt.map(va, first + i * kPageSize, flags)) return false;
  }
  return true;
}

// GDT: null, kernel CS/DS, user32 CS, user DS, user CS, TSS (16 bytes).
void fill_gdt(uint8_t* page) {
  std::memset(page, 0, kPageSize);
  put64(page + kKernelCs, kDescKernelCode64);
  put64(page + kKernelDs, kDescKernelData);
  put64(page + (kUser32Cs & ~3), kDescUserCode32);
  put64(page + (kUserDs & ~3), kDescUserData);
  put64(page + (kUserCs & ~3), kDescUserCode64);
  uint64_t tss_base = kTssVa, tss_limit = kTssSize + kIoBitmapBytes;  // + 0xff end byte
  uint64_t lo = (tss_limit & 0xffff) | ((tss_base & 0xffffff) << 16) | (kAccessTss64 << 40) |
                (((tss_limit >> 16) & 0xf) << 48) | (((tss_base >> 24) & 0xff) << 56);
  put64(page + kTss, lo);
  put64(page + kTss + 8, tss_base >> 32);
}

// IDT: interrupt gates to the exception stubs, 8 bytes of stub per vector.
void fill_idt(uint8_t* page) {
  std::memset(page, 0, kPageSize);
  for (int v = 0; v < kVectors; ++v) {
    uint64_t target = kExceptionStubVa + v * 8;
    uint64_t lo_gate = (target & 0xffff) | (uint64_t(kKernelCs) << 16) | (kAccessInterruptGate << 40) |
                       (((target >> 16) & 0xffff) << 48);
    put64(page + v * 16, lo_gate);
    put64(page + v * 16 + 8, target >> 32);
  }
}

// TSS: RSP0 = kernel stack; I/O bitmap right after it, only our ports open.
void fill_tss(uint8_t* page) {
  std::memset(page, 0, kPageSize);
  put64(page + kTssRsp0Offset, kKernelStackTop);
  uint16_t iomap = kTssSize;
  std::memcpy(page + kTssIoMapOffset, &iomap, sizeof iomap);
  std::memset(page + kTssSize, 0xff, kIoBitmapBytes + 1);
  page[kTssSize + kSyscallPort / 8] &= ~(1u << (kSyscallPort % 8));
  page[kTssSize + kExceptionPort / 8] &= ~(1u << (kExceptionPort % 8));
}

// Syscall stub (LSTAR): out %al,$port; hlt (never reached: the VMM
// resumes the guest at RCX).
void fill_syscall_stub(uint8_t* page) {
  std::memset(page, kOpHlt, kPageSize);
  page[0] = kOpOutImm8Al;
  page[1] = kSyscallPort;
}

// Exception stubs: [push $0 when the CPU pushed no error code]; push $v;
// out %al,$port; hlt. The VMM reads vector and frame from the kernel stack.
void fill_exception_stubs(uint8_t* page) {
  std::memset(page, kOpHlt, kPageSize);
  for (int v = 0; v < kVectors; ++v) {
    uint8_t* s = page + v * 8;
    int i = 0;
    if (!vector_has_error_code(v)) {
      s[i++] = kOpPushImm8;
      s[i++] = 0;
    }
    s[i++] = kOpPushImm8;
    s[i++] = static_cast<uint8_t>(v);
    s[i++] = kOpOutImm8Al;
    s[i++] = kExceptionPort;
  }
}

}  // namespace

bool vector_has_error_code(int v) {
  return v == 8 || v == 10 || v == 11 || v == 12 || v == 13 || v == 14 || v == 17 || v == 21 || v == 29 || v == 30;
}

uint64_t CpuTables::kernel_stack_gpa(uint64_t va) const { return first_frame + (va - kKernelBase); }

bool read_exception_frame(const GuestMemory& mem, const CpuTables& tables, uint64_t rsp, uint64_t stack_lo,
                          uint64_t stack_hi, ExceptionFrame* out) {
  uint64_t f[7];
  if (rsp < stack_lo || rsp > stack_hi || stack_hi - rsp < sizeof f) return false;
  std::memcpy(f, mem.host(tables.kernel_stack_gpa(rsp)), sizeof f);
  *out = ExceptionFrame{f[0], f[1], f[2], f[3], f[4], f[5], f[6]};
  return true;
}

kvm_segment user_segment(uint16_t selector, bool code) {
  kvm_segment s{};
  s.selector = selector;
  s.limit = 0xffffffff;
  s.present = 1;
  s.dpl = 3;
  s.s = 1;
  s.g = 1;
  s.type = code ? kSegCodeExecRead : kSegDataReadWrite;
  s.l = code ? 1 : 0;
  s.db = code ? 0 : 1;
  return s;
}

bool install_cpu_tables(GuestMemory& mem, PageTable& pt, CpuTables* out) {
  uint64_t first = 0;
  if (!alloc_kernel_frames(mem, &first)) return false;
  out->first_frame = first;
  if (!map_kernel_pages(pt, first)) return false;
  // Each table or stub page is built here, then copied to its frame.
  const struct {
    uint64_t va;
    void (*fill)(uint8_t* page);
  } pages[] = {{kGdtVa, fill_gdt},
               {kIdtVa, fill_idt},
               {kTssVa, fill_tss},
               {kSyscallStubVa, fill_syscall_stub},
               {kExceptionStubVa, fill_exception_stubs}};
  uint8_t page[kPageSize];
  for (const auto& p : pages) {
    p.fill(page);
    mem.write(first + (p.va - kKernelBase), page, kPageSize);
  }
  return true;
}

}  // namespace vmha
