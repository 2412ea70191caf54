// Processes of the tree on the vCPU (sys/process_tree.h says why they share
// one VM): a child that ends becomes a zombie, and execve replaces the
// calling process's image. Switching between processes is thread_switch.cc's
// (Vm::install loads the process's page tables).
#include <elf.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "vmha/sys/proc_views.h"
#include "vmha/vmm/layout.h"
#include "vmha/vmm/program_loader.h"
#include "vmha/vmm/vm.h"

namespace vmha {

using namespace layout;

namespace {

constexpr size_t kShebangBytes = 256;
constexpr int kMaxShebangDepth = 4;

// What execve runs for `path` through the guest's policy: the ELF (and its
// interpreter) to load and the argv it gets, following `#!` lines as Linux
// does. -errno as execve answers when it cannot.
struct ExecTarget {
  std::string path;
  std::vector<std::string> argv;
  ElfImage image, interp;
};

int open_executable(const Confinement& root, const std::string& path) {
  int fd = root.open_for_reading(path);
  if (fd < 0) return fd;
  struct stat st;
  if (fstat(fd, &st) != 0 || S_ISDIR(st.st_mode) || !S_ISREG(st.st_mode) || !(st.st_mode & 0111)) {
    close(fd);
    return -EACCES;
  }
  return fd;
}

int resolve_target(const Confinement& root, ExecRequest& req, ExecTarget* out) {
  std::string path = req.path;
  std::vector<std::string> argv = req.argv;
  for (int depth = 0;; ++depth) {
    int fd = open_executable(root, path);
    if (fd < 0) return fd;
    char head[kShebangBytes];
    ssize_t n = pread(fd, head, sizeof head, 0);
    if (n >= 2 && head[0] == '#' && head[1] == '!') {
      close(fd);
      if (depth == kMaxShebangDepth) return -ELOOP;
      std::string line(head + 2, static_cast<size_t>(n) - 2);
      line = line.substr(0, line.find('\n'));
      const char* ws = " \t\r";
      size_t b = line.find_first_not_of(ws);
      if (b == std::string::npos) return -ENOEXEC;
      line = line.substr(b, line.find_last_not_of(ws) - b + 1);
      size_t sp = line.find_first_of(" \t");
      std::string interp = line.substr(0, sp), opt;
      if (sp != std::string::npos) {
        opt = line.substr(sp);
        opt = opt.substr(opt.find_first_not_of(" \t"));
      }
      std::vector<std::string> next = {interp};
      if (!opt.empty()) next.push_back(opt);
      next.push_back(path);
      if (argv.size() > 1) next.insert(next.end(), argv.begin() + 1, argv.end());
      argv = std::move(next);
      path = interp;
      continue;
    }
    Status s = read_elf_fd(fd, path, &out->image);
    close(fd);
    if (!s.ok()) return -ENOEXEC;
    if (!out->image.interpreter.empty() && !read_interpreter(root, out->image, path, &out->interp).ok())
      return -ELIBBAD;
    out->path = path;
    out->argv = std::move(argv);
    return 0;
  }
}

}  // namespace

void Vm::end_process() {
  Process& p = *proc_;
  std::erase_if(thread_cpus_, [&](const auto& kv) { return kv.first.first == p.pid; });
  tree_->end(p);
}

int64_t Vm::exec_image(kvm_regs& r) {
  ExecRequest req = std::move(*proc_->exec);
  proc_->exec.reset();
  ExecTarget t;
  if (int e = resolve_target(proc_->root, req, &t)) return e;
  // The point of no return: the old image goes.
  Process& p = *proc_;
  for (GuestThread& th : p.threads.all())
    if (&th != &p.threads.current()) th.exited = true;
  std::erase_if(thread_cpus_, [&](const auto& kv) { return kv.first.first == p.pid; });
  p.threads.reap();
  if (p.vfork_child) {
    std::unique_ptr<PageTable> pt = tree_->take_tables();
    if (!pt) {
      p.die_by_signal(SIGKILL);
      return 0;
    }
    p.own_pt = std::move(pt);
    p.own_as = std::make_unique<AddressSpace>(*mem_, *p.own_pt);
    p.as = p.own_as.get();
    tree_->release_vfork_parent(p);
  } else {
    p.shared_files.write_back_all(p);
    p.shared_files.clear();
    p.as->release_all();
  }
  as_ = p.as;
  pt_ = &p.as->page_table();
  LoadedProgram prog;
  Status s = load_program(t.image, t.image.interpreter.empty() ? nullptr : &t.interp, t.path, t.argv, req.envp,
                          hwcap_, *as_, &prog);
  as_->take_flush();
  if (Status c = load_cr3(); !c.ok() || !s.ok()) {
    p.log_once(4100, "execve of " + t.path + " failed after the old image was gone: " +
                         (s.ok() ? c.message() : s.message()));
    p.die_by_signal(SIGKILL);
    return 0;
  }
  p.fds.close_on_exec();
  p.exe = program_path(p.root.root_path(), t.path);
  for (int sig = 1; sig <= kMaxSignal; ++sig) {
    KernelSigaction& a = p.sigactions[sig];
    if (a.handler != kSigIgn) a = KernelSigaction{};
  }
  p.signals.altstack = GuestStack{};
  p.signals.saved_mask.reset();
  for (int slot = 1; slot <= kMaxTimers; ++slot) p.signals.timers[slot] = GuestTimer{};
  p.signals.timers_changed = true;
  p.fs_base = 0;
  p.fs_base_changed = true;
  p.call_deadline.reset();
  GuestThread& main = p.threads.current();
  main.clear_child_tid = 0;
  r = kvm_regs{};
  r.rip = prog.entry;
  r.rsp = prog.stack_pointer;
  r.rflags = kRflagsIf | kRflagsFixed;
  kvm_fpu fpu{};
  fpu.fcw = kFcwDefault;
  fpu.mxcsr = kMxcsrDefault;
  ioctl(vcpu_fd_, KVM_SET_FPU, &fpu);
  return 0;
}

}  // namespace vmha
