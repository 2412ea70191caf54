// Vm: one process VM — a KVM virtual machine running an x86-64 Linux
// program at CPL3, whose system calls exit to this VMM, and the processes it
// forks (sys/process_tree.h). Every thread of every process takes turns on
// vCPU 0 (sys/threads.h, thread_switch.cc); with VmOptions::vcpus > 1 the
// other vCPUs run further threads' user code while vCPU 0 runs
// (helper_vcpus.h).
//
// Seams for replication: memory() is one contiguous region registered once;
// tracker() can be harvested from another thread while run() runs;
// request_pause()/wait_paused()/resume() stop the vCPU from another thread;
// save()/restore() turn the whole VM into bytes and back into a fresh VM; all
// external output passes through VmOptions::output.
#pragma once
#include <linux/kvm.h>
#include <pthread.h>

#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "vmha/common/status.h"
#include "vmha/mem/address_space.h"
#include "vmha/mem/guest_memory.h"
#include "vmha/mem/page_table.h"
#include "vmha/output/output_sink.h"
#include "vmha/sys/process.h"
#include "vmha/sys/process_tree.h"
#include "vmha/sys/signal_kick.h"
#include "vmha/track/dirty_tracker.h"
#include "vmha/vmm/cpu_tables.h"
#include "vmha/vmm/elf_image.h"
#include "vmha/vmm/helper_vcpus.h"

namespace vmha {

// The kernel's struct kvm_msrs / kvm_cpuid2 with a fixed number of entries.
template <size_t N>
struct KvmMsrList {
  uint32_t nmsrs = N, pad = 0;
  kvm_msr_entry entries[N] = {};
};
struct KvmCpuidList {
  uint32_t nent = 256, padding = 0;
  kvm_cpuid_entry2 entries[256] = {};
};

// OK when `mib` of guest memory is within layout::kMinMemoryMib to
// kMaxMemoryMib; otherwise an error that names that range.
Status check_memory_mib(uint64_t mib);

struct VmOptions {
  uint64_t memory_bytes = 4ull << 30;  // guest physical memory (reserved, not committed)
  TrackerKind tracker = TrackerKind::kRing;
  std::string workdir = ".";  // read-write; the guest cannot reach outside the policy
  // Read-only paths of the policy (sys/confinement.h); vmha backup gets the
  // primary's (--ro, --no-default-ro) so a resumed guest has the same.
  std::vector<std::string> read_only = default_read_only_paths();
  // The run's private /tmp and /dev/shm (confinement.h): "" for none. A
  // restored VM serves those of the state's run instead.
  std::string run_id;
  OutputSink* output = nullptr;    // nullptr: PassthroughSink
  int std_fds[3] = {0, 1, 2};      // host fds behind guest 0, 1, 2
  bool log_unsupported = true;     // one stderr line per unsupported syscall
  uint8_t* memory_base = nullptr;  // caller-owned guest memory of memory_bytes (nullptr: own mapping)
  // SIGTERM, SIGINT, SIGHUP, SIGUSR1, SIGUSR2 sent to this process go to the
  // guest (its handler or default action) while run() runs (vmha(1) SIGNALS).
  bool relay_host_signals = false;
  // vCPUs: vCPU 0 and vcpus-1 helpers (helper_vcpus.h), 1 to kMaxVcpus;
  // 0: one per CPU this process may run on (a Slurm task's CPUs), at most
  // kMaxVcpus, fewer if KVM gives fewer.
  int vcpus = 0;
};

constexpr int kMaxVcpus = 16;
// OK when `n` is 0 (one per CPU) or within 1 to kMaxVcpus; otherwise an
// error that names the range.
Status check_vcpus(long n);

struct RunResult {
  enum class End { kExited, kSignaled, kStopped, kFailed };
  End end = End::kFailed;
  int code = 0;         // exit status or signal number
  std::string message;  // for kFailed, and how a signal came about
};

enum class HookAction { kContinue, kStop };
class Vm;
// Called on the vCPU thread after each system call completed (count from 1).
using SyscallHook = std::function<HookAction(Vm&, uint64_t nr, uint64_t count)>;

class Vm {
 public:
  ~Vm();
  // Checks /dev/kvm and builds an empty VM (memory, tables, tracker, vCPU).
  static Status create(const VmOptions& opts, std::unique_ptr<Vm>* out);
  // A fresh VM that continues where the saved one stopped.
  static Status restore(const VmOptions& opts, std::span<const uint8_t> state, std::unique_ptr<Vm>* out);
  // The run id a saved state carries ("" for none, or a state it cannot read).
  static std::string run_id_of(std::span<const uint8_t> state);
  // After restore() of a state saved without frames, once the caller has
  // put the guest's memory in place (a backup's committed image): counts
  // the frames several processes share from the page tables in it, as
  // restore() does for a state with frames. Without this, one process's
  // exit would free memory another still maps.
  void adopt_memory();

  Status load(const ElfImage& image, const std::string& exec_name, const std::vector<std::string>& argv,
              const std::vector<std::string>& envp);
  // Runs until the guest exits, dies, a hook stops it, or the VMM fails.
  RunResult run();
  void set_syscall_hook(SyscallHook hook) { hook_ = std::move(hook); }

  // The vCPU thread parks at its next exit; wait_paused() returns once it has
  // parked or run() has returned. A pause requested before run() starts
  // parks at its first step, so callers need not wait for the thread.
  void request_pause();
  void wait_paused();
  void resume();
  // From another thread: run() returns kStopped at the vCPU's next exit,
  // with the guest between two instructions (then save() it).
  void request_stop();

  // Serialises vCPU and VMM state plus guest memory (versioned byte format).
  // Only while the vCPU is not inside KVM_RUN (stopped, parked or finished).
  // with_memory=false: no guest frames (frame count 0), for checkpoints whose
  // memory travels separately; restore it, then copy the frames into memory().
  Status save(std::vector<uint8_t>* out, bool with_memory = true);

  GuestMemory& memory() { return *mem_; }
  DirtyTracker& tracker() { return *tracker_; }
  // The first process (the one `load` started) and its address space.
  AddressSpace& address_space() { return *tree_->root().as; }
  Process& process() { return tree_->root(); }
  ProcessTree& processes() { return *tree_; }
  uint64_t syscalls() const { return syscalls_; }
  // vCPUs in use, and the CPU time the helpers' threads have used.
  int vcpus() const { return 1 + static_cast<int>(helpers_ ? helpers_->size() : 0); }
  double helper_cpu_seconds() const { return helpers_ ? helpers_->cpu_seconds() : 0; }
  // Guest physical address of a guest virtual one (~0 when unmapped).
  uint64_t guest_physical(uint64_t va) { return tree_->root().as->page_table().translate(va, false); }

 private:
  Vm() = default;
  RunResult run_loop();
  RunResult finish_after_exception(const char* what);
  Status open_kvm(const VmOptions& opts);
  Status setup_cpuid(int fd);
  Status set_initial_cpu(uint64_t entry, uint64_t sp);
  Status set_msrs(std::span<const std::pair<uint32_t, uint64_t>> msrs) { return set_msrs(vcpu_fd_, msrs); }
  static Status set_msrs(int fd, std::span<const std::pair<uint32_t, uint64_t>> msrs);
  // What the syscall stub needs on every vCPU: LSTAR and its companions.
  static Status set_syscall_msrs(int fd);
  Status handle_syscall(RunResult* end);
  void handle_exception(RunResult* end);
  Status apply_vmm_changes();
  void park();
  // Guest signals (signal_delivery.cc): at each safe point before KVM_RUN,
  // due timers and host signals become pending and deliverable ones are
  // delivered on the guest stack; rt_sigreturn restores the frame.
  Status start_signals();
  Status deliver_signals(RunResult* end);
  Status deliver_one(int sig, const GuestSiginfo& info, RunResult* end);
  bool sigreturn(kvm_regs& r);
  VcpuKick kick_;
  // When the kick must come next: a guest timer, a thread's timed wait, the
  // end of the running thread's time slice (nanoseconds from now, -1: none).
  int64_t next_kick_ns();

  // Guest threads (thread_switch.cc; the design: sys/threads.h). The thread
  // on the vCPU has its registers there; every other one's are here, by its
  // process id and its table id (0: the main thread).
  struct ThreadCpu {
    kvm_regs regs{};
    std::vector<uint8_t> xsave;  // KVM's XSAVE image (4096 bytes); empty: fpu holds the FPU state
    kvm_fpu fpu{};
  };
  using ThreadKey = std::pair<int32_t, int32_t>;  // (pid, table id)
  std::map<ThreadKey, ThreadCpu> thread_cpus_;
  bool yield_ = false;  // the running thread gave the vCPU up before a call it retries
  int64_t slice_end_ns_ = 0;  // CLOCK_MONOTONIC
  Status save_cpu(ThreadCpu* c);
  Status load_cpu(const ThreadCpu& c);
  static Status get_cpu(int fd, ThreadCpu* c);
  static Status set_cpu(int fd, const ThreadCpu& c);
  // After clone: the new thread starts as its parent returns from the call,
  // with rax = 0 and rsp = its stack.
  Status thread_born(const kvm_regs& parent, ThreadKey key, uint64_t stack);
  // Takes the running thread off the vCPU; puts thread `index` of `q` on it
  // (loading q's page tables when q is another process).
  Status stash_current();
  Status install(Process* q, size_t index);
  // Processes (process_switch.cc): a child that ended becomes a zombie;
  // execve replaces the calling process's image.
  void end_process();
  int64_t exec_image(kvm_regs& r);
  Status load_cr3();
  // At each safe point: ends due waits and time slices and puts a runnable
  // thread on the vCPU; *idle when none can run.
  Status schedule(bool* idle);
  // No thread can run: sleeps until a wait is due, a signal, a pause or a stop.
  void wait_idle();
  // A pending signal that no running or runnable thread can take cuts the
  // wait of one that can.
  void route_signals(Process& p);

  // Helper vCPUs (helper_dispatch.cc): before vCPU 0 enters KVM_RUN,
  // runnable threads that need no VMM work go onto the helpers; when it
  // comes out, they come back as data (recall) before anything else runs.
  // A thread that reached a system call or an exception on a helper waits
  // in want_main_ to run it again on vCPU 0, ahead of the others.
  struct HelperLoad {
    bool used = false;
    ThreadKey key{};
    const AddressSpace* as = nullptr;
    uint64_t generation = 0;  // the address space's when its tables were loaded
    uint64_t cr3 = 0;
    bool sregs_loaded = false;  // the helper holds helper_sregs_ with cr3 and fs
    uint64_t fs = 0;
  };
  std::unique_ptr<HelperVcpus> helpers_;
  std::vector<HelperLoad> helper_loads_;
  std::vector<kvm_sregs> helper_sregs_;  // each helper's segments, tables and TSS
  std::deque<ThreadKey> want_main_;
  size_t dispatch_cursor_ = 0;
  std::atomic<bool> helper_woke_{false};
  Status create_helpers();
  Status prepare_helpers();
  Status dispatch_helpers();
  Status recall_helpers();
  // The runnable thread waiting in want_main_ for vCPU 0, if any.
  std::optional<std::pair<Process*, size_t>> take_want_main();

  VmOptions opts_;
  int kvm_fd_ = -1, vm_fd_ = -1, vcpu_fd_ = -1;
  kvm_run* run_ = nullptr;
  size_t run_size_ = 0;
  std::unique_ptr<GuestMemory> mem_;
  std::unique_ptr<ProcessTree> tree_;
  // The process on the vCPU, its address space and page tables.
  Process* proc_ = nullptr;
  AddressSpace* as_ = nullptr;
  PageTable* pt_ = nullptr;
  std::unique_ptr<DirtyTracker> tracker_;
  std::unique_ptr<OutputSink> own_sink_;
  CpuTables tables_;
  uint64_t hwcap_ = 0;
  uint64_t syscalls_ = 0;
  uint64_t last_nr_ = 0;
  bool restart_ = false;  // the last system call returned kWaitForRelease: run it again
  bool cpl_checked_ = false, syscall_enters_cpl0_ = false;
  // vCPU 0's registers travel in kvm_run (KVM_CAP_SYNC_REGS): KVM stores
  // them there at every return from KVM_RUN and loads the ones marked dirty
  // at the next entry, so reading and changing them costs no ioctl (each
  // vCPU ioctl costs tens of microseconds on this host: kvm_pvm reads MSRs
  // in every vcpu_load). *_current_: the copy there is vCPU 0's (false after
  // an ioctl set them directly, until the next KVM_RUN).
  bool sync_regs_ = false, sync_sregs_ = false;
  bool regs_current_ = false, sregs_current_ = false;
  // Writes the dirty copies with ioctls, for code that reads or sets vCPU 0
  // directly (the state codec, signal frames).
  Status flush_sync_regs();
  Status get_regs(kvm_regs* out);
  Status set_regs(const kvm_regs& r);
  Status get_sregs(kvm_sregs* out);
  Status set_sregs(const kvm_sregs& s);
  SyscallHook hook_;

  pthread_t vcpu_thread_{};
  std::atomic<bool> running_{false};
  std::atomic<bool> pause_requested_{false};
  std::atomic<bool> stop_requested_{false};
  std::mutex mu_;
  std::condition_variable cv_;
  bool parked_ = false;
  bool finished_ = false;  // run() returned (not: has not started yet)

  friend class VmStateCodec;
};

const char* signal_name(int sig);

}  // namespace vmha
