#include "vmha/vmm/helper_vcpus.h"

#include <signal.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <exception>

#include "vmha/vmm/layout.h"

namespace vmha {

using namespace layout;

namespace {
// The no-op signal that cuts KVM_RUN short (installed by vm_setup.cc).
int stop_signal() { return SIGRTMIN + 5; }
}  // namespace

HelperVcpus::~HelperVcpus() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    quit_ = true;
    cv_.notify_all();
  }
  for (auto& c : cpus_) {
    if (c->thread_made) pthread_join(c->thread, nullptr);
    if (c->run) munmap(c->run, c->run_size);
    if (c->fd >= 0) close(c->fd);
  }
}

Status HelperVcpus::add(int kvm_fd, int vm_fd, int id, const std::function<Status(int fd)>& setup) {
  auto c = std::make_unique<Cpu>();
  auto undo = [&c](Status s) {
    if (c->run) munmap(c->run, c->run_size);
    if (c->fd >= 0) close(c->fd);
    return s;
  };
  c->fd = ioctl(vm_fd, KVM_CREATE_VCPU, id);
  if (c->fd < 0) return Status::error(errno_text("KVM_CREATE_VCPU " + std::to_string(id)));
  int size = ioctl(kvm_fd, KVM_GET_VCPU_MMAP_SIZE, 0);
  if (size <= 0) return undo(Status::error(errno_text("KVM_GET_VCPU_MMAP_SIZE")));
  void* p = mmap(nullptr, static_cast<size_t>(size), PROT_READ | PROT_WRITE, MAP_SHARED, c->fd, 0);
  if (p == MAP_FAILED) return undo(Status::error(errno_text("mmap of kvm_run")));
  c->run = static_cast<kvm_run*>(p);
  c->run_size = static_cast<size_t>(size);
  if (Status s = setup(c->fd); !s.ok()) return undo(s);
  // An unused vCPU's ring stays with the tracker if the thread fails below:
  // empty, and unmapped when the tracker goes.
  if (Status s = tracker_.attach_vcpu(c->fd); !s.ok()) return undo(s);
  // Only the stop signal reaches a helper's thread: host signals and vCPU 0's
  // kicks go to vmha's other threads (the mask is inherited from here).
  sigset_t all, old;
  sigfillset(&all);
  sigdelset(&all, stop_signal());
  pthread_sigmask(SIG_SETMASK, &all, &old);
  auto* arg = new std::pair<HelperVcpus*, Cpu*>(this, c.get());
  int rc = pthread_create(&c->thread, nullptr, &HelperVcpus::thread_main, arg);
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  if (rc != 0) {
    delete arg;
    return undo(Status::error("pthread_create for vCPU " + std::to_string(id) + ": " + strerror(rc)));
  }
  c->thread_made = true;
  cpus_.push_back(std::move(c));
  return Status();
}

double HelperVcpus::cpu_seconds() const {
  double total = 0;
  for (const auto& c : cpus_) {
    clockid_t clock;
    timespec t{};
    if (c->thread_made && pthread_getcpuclockid(c->thread, &clock) == 0 && clock_gettime(clock, &t) == 0)
      total += static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
  }
  return total;
}

void* HelperVcpus::thread_main(void* arg) {
  auto* p = static_cast<std::pair<HelperVcpus*, Cpu*>*>(arg);
  HelperVcpus* self = p->first;
  Cpu* c = p->second;
  delete p;
  self->loop(*c);
  return nullptr;
}

void HelperVcpus::loop(Cpu& c) {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    cv_.wait(lock, [&] { return quit_ || c.go; });
    if (quit_) return;
    c.go = false;
    lock.unlock();
    std::string why;
    Exit e;
    try {  // no exception leaves this thread: the VMM reads a failure instead
      e = run_until_exit(c, &why);
    } catch (const std::exception& ex) {
      e = Exit::kFailed;
      why = std::string("internal error: ") + ex.what();
    }
    lock.lock();
    c.exit = e;
    c.why = std::move(why);
    // By itself (not stopped): vCPU 0 must come out and serve it.
    const bool by_itself = !c.stop;
    if (by_itself) {
      lock.unlock();
      on_exit_();
      lock.lock();
    }
    c.in_run = false;
    cv_.notify_all();
  }
}

HelperVcpus::Exit HelperVcpus::run_until_exit(Cpu& c, std::string* why) {
  for (;;) {
    if (ioctl(c.fd, KVM_RUN, 0) < 0) {
      if (errno == EINTR || errno == EAGAIN) return Exit::kPreempted;
      *why = errno_text("KVM_RUN");
      return Exit::kFailed;
    }
    switch (c.run->exit_reason) {
      case KVM_EXIT_IO:
        if (c.run->io.direction == KVM_EXIT_IO_OUT && c.run->io.port == kSyscallPort) return Exit::kSyscall;
        if (c.run->io.direction == KVM_EXIT_IO_OUT && c.run->io.port == kExceptionPort) return Exit::kException;
        return Exit::kSyscall;  // another port: vCPU 0 runs the `out` again and refuses it
      case KVM_EXIT_DIRTY_RING_FULL:
        if (Status s = tracker_.on_ring_full(); !s.ok()) {
          *why = s.message();
          return Exit::kFailed;
        }
        if (__atomic_load_n(&c.run->immediate_exit, __ATOMIC_ACQUIRE)) return Exit::kPreempted;
        continue;
      case KVM_EXIT_INTR:
        return Exit::kPreempted;
      case KVM_EXIT_HLT:
        *why = "guest halted (hlt)";
        return Exit::kFailed;
      case KVM_EXIT_SHUTDOWN:
        *why = "guest triple fault (KVM_EXIT_SHUTDOWN)";
        return Exit::kFailed;
      default:
        *why = "unexpected KVM exit " + std::to_string(c.run->exit_reason);
        return Exit::kFailed;
    }
  }
}

void HelperVcpus::start(size_t k) {
  std::lock_guard<std::mutex> lock(mu_);
  Cpu& c = *cpus_[k];
  c.run->immediate_exit = 0;
  c.stop = false;
  c.exit = Exit::kNone;
  c.why.clear();
  c.go = c.in_run = true;
  cv_.notify_all();
}

void HelperVcpus::stop_all() {
  std::unique_lock<std::mutex> lock(mu_);
  for (auto& c : cpus_) {
    if (!c->in_run) continue;
    c->stop = true;
    // Sticky: a KVM_RUN entered after the signal returns at once.
    __atomic_store_n(&c->run->immediate_exit, 1, __ATOMIC_RELEASE);
    pthread_kill(c->thread, stop_signal());
  }
  for (auto& c : cpus_) cv_.wait(lock, [&] { return !c->in_run; });
}

}  // namespace vmha
