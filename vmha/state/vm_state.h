// The VM state format (version 1): every byte needed to continue a process VM
// in a fresh VMM — vCPU registers (general, segment, control, FPU/SSE, MSRs),
// VMM state (page-table roots, mappings, brk, fd table with paths, offsets
// and in-flight pipe data, signal dispositions) and the non-zero guest frames.
// One format serves snapshot/restore, checkpoints and failover.
#pragma once
#include <cstdint>

namespace vmha {

constexpr char kStateMagic[8] = {'V', 'M', 'H', 'A', 'S', 'T', 'A', 'T'};
constexpr char kStateEndMagic[8] = {'V', 'M', 'H', 'A', 'E', 'N', 'D', '!'};
constexpr uint32_t kStateVersion = 1;

}  // namespace vmha
