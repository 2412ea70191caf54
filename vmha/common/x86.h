// x86-64 numbers the VMM programs into the CPU and its tables (Intel SDM,
// vol. 3): page geometry, page-table entry bits, control and flags register
// bits, MSR numbers, flat segment descriptors and gate types. Hardware facts,
// not choices; the VMM's own choices are in vmha/vmm/layout.h.
#pragma once
#include <cstddef>
#include <cstdint>

namespace vmha::x86 {

// 4 KiB pages; four levels of tables of 512 eight-byte entries.
inline constexpr uint64_t kPageShift = 12;
inline constexpr uint64_t kPageSize = 1ull << kPageShift;
inline constexpr uint64_t kPageMask = ~(kPageSize - 1);
inline constexpr unsigned kTableIndexBits = 9;
inline constexpr uint64_t kTableIndexMask = (1u << kTableIndexBits) - 1;
inline constexpr uint64_t kPteBytes = 8;
// A large page: one page-directory entry maps 2 MiB.
inline constexpr uint64_t kLargePageSize = 2ull << 20;

// Page-table entry bits.
inline constexpr uint64_t kPtePresent = 1ull << 0;
inline constexpr uint64_t kPteWrite = 1ull << 1;
inline constexpr uint64_t kPteUser = 1ull << 2;
inline constexpr uint64_t kPteAccessed = 1ull << 5;
inline constexpr uint64_t kPteDirty = 1ull << 6;
inline constexpr uint64_t kPteNoExec = 1ull << 63;
inline constexpr uint64_t kPteFrame = 0x000ffffffffff000ull;

// Control registers and EFER.
inline constexpr uint64_t kCr0Pe = 1ull << 0, kCr0Mp = 1ull << 1, kCr0Et = 1ull << 4, kCr0Ne = 1ull << 5,
                          kCr0Wp = 1ull << 16, kCr0Am = 1ull << 18, kCr0Pg = 1ull << 31;
inline constexpr uint64_t kCr4Pae = 1ull << 5, kCr4Osfxsr = 1ull << 9, kCr4Osxmmexcpt = 1ull << 10;
inline constexpr uint64_t kEferSce = 1ull << 0, kEferLme = 1ull << 8, kEferLma = 1ull << 10, kEferNxe = 1ull << 11;

// RFLAGS. Bit 1 always reads as 1.
inline constexpr uint64_t kRflagsFixed = 1ull << 1, kRflagsTf = 1ull << 8, kRflagsIf = 1ull << 9,
                          kRflagsDf = 1ull << 10, kRflagsNt = 1ull << 14;
// The RFLAGS bits SYSRET loads from R11 (the others read as 0, bit 1 as 1).
inline constexpr uint64_t kSysretRflagsMask = 0x3c7fd7;

// x87 and SSE control words after FNINIT / reset.
inline constexpr uint16_t kFcwDefault = 0x37f;
inline constexpr uint32_t kMxcsrDefault = 0x1f80;

// MSRs.
inline constexpr uint32_t kMsrStar = 0xc0000081, kMsrLstar = 0xc0000082, kMsrCstar = 0xc0000083,
                          kMsrSfmask = 0xc0000084, kMsrFsBase = 0xc0000100, kMsrGsBase = 0xc0000101,
                          kMsrKernelGsBase = 0xc0000102;

// Flat 4 GiB segment descriptors (base 0, limit 0xfffff pages).
inline constexpr uint64_t kDescKernelCode64 = 0x00af9b000000ffffull;  // L, DPL 0, execute/read
inline constexpr uint64_t kDescKernelData = 0x00cf93000000ffffull;    // DPL 0, read/write
inline constexpr uint64_t kDescUserCode32 = 0x00cffb000000ffffull;    // D, DPL 3, execute/read
inline constexpr uint64_t kDescUserData = 0x00cff3000000ffffull;      // DPL 3, read/write
inline constexpr uint64_t kDescUserCode64 = 0x00affb000000ffffull;    // L, DPL 3, execute/read
// System descriptor access bytes (present, DPL 0).
inline constexpr uint64_t kAccessTss64 = 0x89;  // available 64-bit TSS
inline constexpr uint64_t kAccessInterruptGate = 0x8e;
// Segment types in kvm_segment.type.
inline constexpr uint8_t kSegCodeExecRead = 11, kSegDataReadWrite = 3, kSegTssBusy = 11, kSegLdt = 2;

// The 64-bit TSS: 104 bytes, the I/O bitmap offset at byte 102; one bitmap
// bit per port.
inline constexpr uint32_t kTssSize = 104;
inline constexpr uint32_t kTssIoMapOffset = 102;
inline constexpr uint32_t kTssRsp0Offset = 4;

// Instruction bytes of the VMM's stubs.
inline constexpr uint8_t kOpOutImm8Al = 0xe6, kOpPushImm8 = 0x6a, kOpHlt = 0xf4;

// The XSAVE image's legacy (FXSAVE) area and, inside it, where the bytes
// left to software begin (Intel SDM vol. 1, 10.5.1).
inline constexpr size_t kXsaveLegacyBytes = 512, kXsaveSoftwareBytes = 464;

// CPUID feature bits (leaf 1 ECX; leaf 7 subleaf 0 EBX, ECX, EDX) of the
// AVX, AVX-512 and AMX families and XSAVE itself.
namespace cpuid {
inline constexpr uint32_t k1EcxFma = 1u << 12, k1EcxXsave = 1u << 26, k1EcxOsxsave = 1u << 27, k1EcxAvx = 1u << 28,
                          k1EcxF16c = 1u << 29;
inline constexpr uint32_t k7EbxAvx2 = 1u << 5, k7EbxAvx512F = 1u << 16, k7EbxAvx512Dq = 1u << 17,
                          k7EbxAvx512Ifma = 1u << 21, k7EbxAvx512Pf = 1u << 26, k7EbxAvx512Er = 1u << 27,
                          k7EbxAvx512Cd = 1u << 28, k7EbxAvx512Bw = 1u << 30, k7EbxAvx512Vl = 1u << 31;
inline constexpr uint32_t k7EcxAvx512Vbmi = 1u << 1, k7EcxAvx512Vbmi2 = 1u << 6, k7EcxVaes = 1u << 9,
                          k7EcxVpclmulqdq = 1u << 10, k7EcxAvx512Vnni = 1u << 11, k7EcxAvx512Bitalg = 1u << 12,
                          k7EcxAvx512Vpopcntdq = 1u << 14;
inline constexpr uint32_t k7EdxAvx5124Vnniw = 1u << 2, k7EdxAvx5124Fmaps = 1u << 3, k7EdxAvx512Vp2intersect = 1u << 8,
                          k7EdxAmxBf16 = 1u << 22, k7EdxAvx512Fp16 = 1u << 23, k7EdxAmxTile = 1u << 24,
                          k7EdxAmxInt8 = 1u << 25;
inline constexpr uint32_t kLeafFeatures = 1, kLeafExtendedFeatures = 7, kLeafXsave = 0xd;
}  // namespace cpuid

}  // namespace vmha::x86
