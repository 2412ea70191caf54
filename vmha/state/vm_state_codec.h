// The sections of the VM state format (vm_state.h), in file order, each as an
// encode/decode pair written side by side so a reader sees they mirror each
// other. Vm::save and Vm::restore (vm_state.cc) only walk them in order:
//   header       vm_state.cc      magic, version, guest memory size, run id
//                                 (version 6)
//   vCPU         vcpu_codec.cc    registers, FPU/XSAVE image, MSRs
//   page tables  vmm_codec.cc     page-table roots, kernel frames
//   mappings     vmm_codec.cc     brk, guest mappings
//   process      vmm_codec.cc     FS base, signals, system-call state, hwcap
//   signals      signal_codec.cc  pending signals, alternate stack, timers
//                                 (version 2 and up; version 2 is written when
//                                 there are any)
//   threads      thread_codec.cc  threads, their waits and registers (version 3
//                                 only: written once the guest started a thread)
//   tree         tree_codec.cc    version 4 (a guest that forked): instead of
//                                 the page tables .. fd table sections, the
//                                 processes and each one's sections
//   names        names_codec.cc   version 5: each process's program path, after
//                                 the tree section (which version 5 always has)
//   places       places_codec.cc  version 6: each process's working directory,
//                                 after the names section (which version 6
//                                 always has)
//   fd table     fd_codec.cc      descriptors with paths, offsets, pipe data
//   memory       memory_codec.cc  frame allocator, non-zero frames
//   end          vm_state.cc      end marker
// The state may be hostile: decoders check every value they read and, on a
// bad one, fail the reader, which names the byte offset and what was
// expected. Internal to the state format; not part of the VM's interface.
#pragma once
#include <linux/kvm.h>

#include <cstdint>
#include <map>
#include <memory>
#include <utility>
#include <vector>

#include "vmha/state/byte_stream.h"
#include "vmha/vmm/vm.h"

namespace vmha {

// struct kvm_xsave as the kernel sizes it (4096 bytes; see layout.h).
struct XsaveArea {
  uint8_t bytes[4096] = {};
};

// The vCPU section as read. Restore applies it to the new vCPU only after the
// whole state has been read and checked.
struct VcpuRecord {
  kvm_regs regs{};
  kvm_sregs sregs{};
  kvm_fpu fpu{};
  bool has_xsave = false;
  std::unique_ptr<XsaveArea> xsave = std::make_unique<XsaveArea>();
  std::vector<std::pair<uint32_t, uint64_t>> msrs;
};

// The host pipe or socketpair of one channel while a state is restored,
// created by its first descriptor; the fd tables hold their own duplicates.
struct ChannelPair {
  int host[2] = {-1, -1};
  bool filled[2] = {false, false};
  FdKind kind = FdKind::kPipe;
};
struct ChannelPairs {
  std::map<int, ChannelPair> pairs;
  // A file, device or listing shared by dup or fork (FdEntry::channel):
  // the first descriptor's host fd, which the others dup.
  std::map<int, int> descriptions;
  ~ChannelPairs();
};

// What waits in channels (channel_codec.cc): the bytes in flight in a pipe
// or socketpair end (a datagram or seqpacket end's as its messages, each
// with a 4-byte length), and a listener's queue of connections not yet
// accepted (each its channel and the bytes waiting at its accepting end).
Status peek_pending(const FdEntry& e, std::string* out);
Status encode_listener_queue(const UnixListener& l, std::string* out);
// The host fd of a restored pipe or socketpair end (kind, FdEntry::path's
// socket type, channel, end), the channel's pair made by its first end and
// refilled with `pending` once per end. -1 with *problem set, or with the
// reader failed on a bad value.
int reopen_pair_end(ByteReader& r, ChannelPairs& channels, const FdEntry& e, const std::string& pending,
                    std::string* problem);
// What an epoll instance watches (epoll_codec.cc), and a restored
// process's instance `epfd` watching it again once its table is open: ""
// or why a host call failed (a bad record fails the reader).
void encode_epoll_interest(const EpollSets::Interest& interest, std::string* out);
std::string rewatch_epoll(ByteReader& r, Process& p, int epfd, const std::string& saved);
// A restored listener's host fd (a dup of its eventfd): the first of its
// descriptors makes it and requeues its connections from `queue`.
int reopen_listener(ByteReader& r, Process& p, ChannelPairs& channels, const FdEntry& e, const std::string& queue,
                    std::string* problem);

class VmStateCodec {
 public:
  static void encode_header(ByteWriter& w, const Vm& vm);
  // Fills opts->memory_bytes and *version (1 to kStateVersion).
  static Status decode_header(ByteReader& r, VmOptions* opts, uint32_t* version);

  static Status encode_vcpu(ByteWriter& w, Vm& vm);
  static void decode_vcpu(ByteReader& r, VcpuRecord* cpu);
  static Status apply_vcpu(Vm& vm, const VcpuRecord& cpu);

  static void encode_page_tables(ByteWriter& w, const Vm& vm);
  static void decode_page_tables(ByteReader& r, Vm& vm);

  static void encode_mappings(ByteWriter& w, const Vm& vm);
  static void decode_mappings(ByteReader& r, Vm& vm);

  static void encode_process(ByteWriter& w, const Vm& vm);
  static void decode_process(ByteReader& r, Vm& vm);

  static bool has_signals(const Vm& vm);  // version 2 is needed
  static void encode_signals(ByteWriter& w, const Vm& vm);
  static void decode_signals(ByteReader& r, Vm& vm);

  static bool has_threads(const Vm& vm);  // version 3 is needed
  // `tree`: version 4's per-process thread section (child waits, and the
  // registers of every thread that is not on the vCPU).
  static void encode_threads(ByteWriter& w, const Vm& vm, bool tree = false);
  static void decode_threads(ByteReader& r, Vm& vm, bool tree = false);

  // Version 4: the process tree and each process's sections (tree_codec.cc).
  static bool has_tree(const Vm& vm);
  static Status encode_tree(ByteWriter& w, Vm& vm);
  static Status decode_tree(ByteReader& r, const VmOptions& opts, Vm& vm);

  // Version 5: each process's program path (names_codec.cc).
  static bool has_names(const Vm& vm);
  static void encode_names(ByteWriter& w, const Vm& vm);
  static void decode_names(ByteReader& r, Vm& vm);

  // Version 6: the run id of the private directories and each process's
  // working directory (places_codec.cc).
  static bool has_places(const Vm& vm);
  static void encode_places(ByteWriter& w, const Vm& vm);
  static Status decode_places(ByteReader& r, Vm& vm);

  static Status encode_fds(ByteWriter& w, const Vm& vm);
  // Reopens files, recreates pipes and socketpairs; an error here is a host
  // failure (a file gone, no pipe), not a malformed state.
  // `channels`: the pipes recreated so far, shared by the processes of a
  // tree (nullptr: this table's own; closed at the end).
  static Status decode_fds(ByteReader& r, const VmOptions& opts, Vm& vm, ChannelPairs* channels = nullptr);

  static void encode_memory(ByteWriter& w, const Vm& vm, bool with_frames);
  static void decode_memory(ByteReader& r, Vm& vm);

  // After a restore: the frames several page tables map (shared memory a
  // fork passed on, or a state that maps one frame twice) get their extra
  // references, so freeing one mapping does not free the frame under another.
  static void count_shared_frames(Vm& vm);

  static void encode_end(ByteWriter& w);
  static void decode_end(ByteReader& r);

 private:
  // A page-aligned, non-null guest frame inside the VM's memory.
  static bool frame_inside(const Vm& vm, uint64_t gpa);
};

}  // namespace vmha
