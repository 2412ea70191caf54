// The VM state format (versions 1 to 5): every byte needed to continue a process VM
// in a fresh VMM — vCPU registers (general, segment, control, FPU/SSE, MSRs),
// VMM state (page-table roots, mappings, brk, fd table with paths, offsets
// and in-flight pipe data, signal dispositions) and the non-zero guest frames.
// One format serves snapshot/restore, checkpoints and failover.
// A descriptor under a read-only path of the confinement policy is fd kind 5
// with its absolute path: it is reopened through the restoring VMM's own
// policy (the policy itself is not in the state: vmha backup takes the
// primary's --ro options). A vmha from before kind 5 refuses such a state
// ("fd kind: expected 0..4"); every state it wrote reads as before.
#pragma once
#include <cstdint>

namespace vmha {

constexpr char kStateMagic[8] = {'V', 'M', 'H', 'A', 'S', 'T', 'A', 'T'};
constexpr char kStateEndMagic[8] = {'V', 'M', 'H', 'A', 'E', 'N', 'D', '!'};
// Version 2 adds the signal section (signal_codec.cc) after the process
// section; a state is written as version 2 only when it has one (pending
// signals, an alternate stack, timers), so every other state is the same
// version 1 as before. Version 3 adds the thread section (thread_codec.cc)
// after the signal section, which it always has (empty or not); it is
// written only for a guest that started a thread, so a single-threaded
// program's state stays version 1 or 2 and readable by an older vmha.
// Version 4 holds a process tree (tree_codec.cc): after the process record
// of the running process come the tree section and, per process, its page
// tables, mappings, process, signal, thread and fd sections; it is written
// only for a guest that forked, so a single process's state stays version 1
// to 3 and readable by an older vmha (which refuses version 4, naming it).
// Version 5 adds each process's program path (/proc/self/exe) in a names
// section after the tree section, and is always laid out as version 4 (a
// tree, of one process or more). Every guest vmha starts has a program
// path, so its states are version 5; a state restored from an older
// version has none, and is saved in the version it came in.
// A descriptor of the /proc/self/fd directory is fd kind 6 (its listing as
// the pending data); an older vmha refuses it ("fd kind: expected 0..5").
// This vmha reads versions 1 to 5 and refuses any other, naming both.
constexpr uint32_t kStateVersion = 6;

}  // namespace vmha
