// The process tree section of the VM state (version 4): one record per
// process (ids, parent, zombie status, how it ended, whether a vfork child
// borrows its parent's memory), the spare page tables, then each live process's page tables, mappings, process,
// signal, thread and fd sections, written by the same codecs as a single
// process's with the VM's current process pointed at it. The pipes of the
// tree are recreated once per channel for all of them, so a pipe between
// two processes is one host pipe again, refilled with its bytes in flight.
#include <cstring>

#include "vmha/state/vm_state_codec.h"

namespace vmha {

namespace {

constexpr char kTreeMagic[8] = {'V', 'M', 'H', 'A', 'T', 'R', 'E', 'E'};
constexpr uint32_t kZombie = 1, kVforkChild = 2;

// Points the VM's current process at `q` while its sections are coded.
struct CurrentProcess {
  Process*& proc;
  AddressSpace*& as;
  PageTable*& pt;
  Process* saved_proc;
  AddressSpace* saved_as;
  PageTable* saved_pt;
  CurrentProcess(Process*& p, AddressSpace*& a, PageTable*& t)
      : proc(p), as(a), pt(t), saved_proc(p), saved_as(a), saved_pt(t) {}
  void set(Process* q) {
    proc = q;
    as = q->as;
    pt = &q->as->page_table();
  }
  ~CurrentProcess() {
    proc = saved_proc;
    as = saved_as;
    pt = saved_pt;
  }
};

}  // namespace

bool VmStateCodec::has_tree(const Vm& vm) {
  return vm.tree_->several() || vm.tree_->next_pid() != kFirstChildPid;
}

Status VmStateCodec::encode_tree(ByteWriter& w, Vm& vm) {
  const auto& all = vm.tree_->all();
  w.bytes(kTreeMagic, 8);
  w.u32(static_cast<uint32_t>(all.size()));
  size_t running = 0;
  while (running < all.size() && all[running].get() != vm.proc_) ++running;
  w.u32(static_cast<uint32_t>(running));
  w.u32(static_cast<uint32_t>(vm.tree_->next_pid()));
  for (const auto& q : all) {
    w.u32(static_cast<uint32_t>(q->pid));
    w.u32(static_cast<uint32_t>(q->ppid));
    w.u32(static_cast<uint32_t>(q->pgid));
    w.u32(static_cast<uint32_t>(q->sid));
    w.u32((q->zombie ? kZombie : 0) | (q->vfork_child ? kVforkChild : 0));
    w.u32(static_cast<uint32_t>(q->wait_status));
    w.u32(static_cast<uint32_t>(q->exit.requested) | (static_cast<uint32_t>(q->exit.by_signal) << 1));
    w.u32(static_cast<uint32_t>(q->exit.code));
  }
  // The page tables ended processes left for the next ones (page_table.h).
  w.u32(static_cast<uint32_t>(vm.tree_->spare_tables().size()));
  for (const auto& pt : vm.tree_->spare_tables()) {
    w.u64(pt->root(0));
    w.u64(pt->root(1));
    w.u32(static_cast<uint32_t>(pt->current()));
  }
  CurrentProcess cur(vm.proc_, vm.as_, vm.pt_);
  for (const auto& q : all) {
    if (q->zombie) continue;
    cur.set(q.get());
    if (!q->vfork_child) {  // a vfork child's memory is its parent's
      encode_page_tables(w, vm);
      encode_mappings(w, vm);
    }
    encode_process(w, vm);
    encode_signals(w, vm);
    encode_threads(w, vm, true);
    if (Status s = encode_fds(w, vm); !s.ok()) return s;
  }
  return Status();
}

Status VmStateCodec::decode_tree(ByteReader& r, const VmOptions& opts, Vm& vm) {
  char magic[8];
  if (r.bytes(magic, 8, "tree section") && std::memcmp(magic, kTreeMagic, 8) != 0) r.fail("tree section", "VMHATREE");
  const uint32_t n = r.u32("process count"), running = r.u32("running process");
  const auto next_pid = static_cast<int32_t>(r.u32("next process id"));
  if (r.ok() && (n < 1 || n > kMaxProcesses)) r.fail("process count", "1..512");
  if (r.ok() && running >= n) r.fail("running process", "an index below the process count");
  if (r.ok() && (next_pid < kFirstChildPid || next_pid >= kFirstThreadId)) r.fail("next process id", "2097152..4194303");
  if (!r.ok()) return Status();
  std::vector<std::unique_ptr<Process>> procs;
  procs.push_back(std::move(vm.tree_->all().front()));  // the first process, made by open_kvm
  Process& root = *procs.front();
  for (uint32_t i = 0; i < n && r.ok(); ++i) {
    Process* q = &root;
    if (i > 0) {
      auto pt = std::make_unique<PageTable>(*vm.mem_);
      auto as = std::make_unique<AddressSpace>(*vm.mem_, *pt);
      procs.push_back(std::make_unique<Process>(*as));
      q = procs.back().get();
      q->own_pt = std::move(pt);
      q->own_as = std::move(as);
      if (Status s = q->root.open_like(root.root); !s.ok()) {
        vm.tree_->replace(std::move(procs), next_pid);
        return s;
      }
      q->out = root.out;
      q->log_unsupported = root.log_unsupported;
      q->log_prefix = root.log_prefix;
      q->fds.share_channels(root.fds);
    }
    q->pid = static_cast<int32_t>(r.u32("process id"));
    q->ppid = static_cast<int32_t>(r.u32("parent process id"));
    q->pgid = static_cast<int32_t>(r.u32("process group"));
    q->sid = static_cast<int32_t>(r.u32("session"));
    const uint32_t flags = r.u32("process flags");
    q->wait_status = static_cast<int>(r.u32("wait status"));
    const uint32_t exit = r.u32("exit flags");
    q->exit.code = static_cast<int>(r.u32("exit code"));
    if (r.ok() && (flags > 3 || exit > 3 || (i == 0 && flags))) r.fail("process flags", "0..3 (0 for the first)");
    if (r.ok() && q->pid <= 0) r.fail("process id", "a positive id");
    q->zombie = flags & kZombie;
    q->vfork_child = flags & kVforkChild;
    q->exit.requested = exit & 1;
    q->exit.by_signal = exit & 2;
    q->threads.set_pid(q->pid);
    if (q->zombie)
      for (GuestThread& t : q->threads.all()) t.exited = true;
  }
  for (size_t i = 0; i < procs.size() && r.ok(); ++i)
    for (size_t j = 0; j < i; ++j)
      if (procs[i]->pid == procs[j]->pid) r.fail("process id", "an id no other process has");
  vm.tree_->replace(std::move(procs), next_pid);
  if (!r.ok()) return Status();
  const uint32_t spares = r.u32("spare page-table count");
  if (r.ok() && spares > kMaxProcesses) r.fail("spare page-table count", "at most 512");
  for (uint32_t i = 0; i < spares && r.ok(); ++i) {
    const uint64_t root0 = r.u64("spare page-table root"), root1 = r.u64("spare page-table root");
    const uint32_t current = r.u32("spare current root");
    if (r.ok() && (!frame_inside(vm, root0) || !frame_inside(vm, root1) || current > 1))
      r.fail("spare page-table roots", "page-aligned frames inside guest memory");
    auto pt = std::make_unique<PageTable>(*vm.mem_);
    pt->set_roots(root0, root1, static_cast<int>(current));
    vm.tree_->add_spare_tables(std::move(pt));
  }
  if (!r.ok()) return Status();
  // A vfork child uses its parent's address space until it execs or ends.
  for (auto& q : vm.tree_->all()) {
    if (!q->vfork_child || q->zombie) continue;
    Process* parent = vm.tree_->find(q->ppid);
    if (!parent || parent->vfork_child) {
      r.fail("vfork child", "a parent whose memory it borrows");
      return Status();
    }
    q->as = parent->as;
  }
  ChannelPairs channels;
  CurrentProcess cur(vm.proc_, vm.as_, vm.pt_);
  for (auto& q : vm.tree_->all()) {
    if (q->zombie) continue;
    cur.set(q.get());
    if (!q->vfork_child) {
      decode_page_tables(r, vm);
      decode_mappings(r, vm);
    }
    decode_process(r, vm);
    decode_signals(r, vm);
    decode_threads(r, vm, true);
    if (!r.ok()) return Status();
    if (Status s = decode_fds(r, opts, vm, &channels); !s.ok()) return s;
    if (!r.ok()) return Status();
  }
  // (A process that ended on the vCPU may be the running one: the VMM then
  // switches to another before it runs anything.)
  Process* on_vcpu = vm.tree_->all()[running].get();
  cur.saved_proc = on_vcpu;
  cur.saved_as = on_vcpu->as;
  cur.saved_pt = &on_vcpu->as->page_table();
  return Status();
}

}  // namespace vmha
