// HelperVcpus: the VM's vCPUs after the first (vmha run --vcpus N), each
// with a host thread of its own, on which guest threads other than the one
// on vCPU 0 run their user code at the same time as it.
//
// Design: a helper runs only while vCPU 0 is inside KVM_RUN. Whenever vCPU 0
// comes out, the VMM stops every helper (stop_all) before it does anything
// else, so a system call, a pause, a save or a restore still sees the one-
// vCPU picture of sys/threads.h: one thread on vCPU 0, every other one as
// data. A helper never serves a system call or an exception itself: it
// stops, and the VMM puts that thread back before the call or the faulting
// instruction to run it on vCPU 0 (vmm/helper_dispatch.cc). Compute runs in
// parallel; everything the VMM does stays serial and needs no locks.
#pragma once
#include <linux/kvm.h>
#include <pthread.h>

#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "vmha/common/status.h"
#include "vmha/track/dirty_tracker.h"

namespace vmha {

class HelperVcpus {
 public:
  // How a helper's last KVM_RUN ended.
  enum class Exit { kNone, kPreempted, kSyscall, kException, kFailed };

  // `on_exit` runs on a helper's thread when its guest thread left KVM_RUN
  // by itself (a system call, an exception, an error): it must bring vCPU 0
  // out of KVM_RUN so the VMM serves it.
  HelperVcpus(DirtyTracker& tracker, std::function<void()> on_exit) : tracker_(tracker), on_exit_(std::move(on_exit)) {}
  ~HelperVcpus();
  HelperVcpus(const HelperVcpus&) = delete;
  HelperVcpus& operator=(const HelperVcpus&) = delete;

  // Creates vCPU `id` of the VM (after vCPU 0 and the dirty ring) with its
  // kvm_run page, its dirty ring, `setup` (CPUID) and its host thread; on
  // an error nothing of it is left.
  Status add(int kvm_fd, int vm_fd, int id, const std::function<Status(int fd)>& setup);
  size_t size() const { return cpus_.size(); }
  int fd(size_t k) const { return cpus_[k]->fd; }

  // Helper k runs the registers loaded into it until stop_all().
  void start(size_t k);
  // Stops every started helper and waits until each is out of KVM_RUN.
  void stop_all();
  Exit exit(size_t k) const { return cpus_[k]->exit; }
  const std::string& why(size_t k) const { return cpus_[k]->why; }
  // CPU time of the helpers' threads so far.
  double cpu_seconds() const;

 private:
  struct Cpu {
    int fd = -1;
    kvm_run* run = nullptr;
    size_t run_size = 0;
    pthread_t thread{};
    bool thread_made = false;
    bool go = false;      // its host thread should enter KVM_RUN
    bool in_run = false;  // between go and the end of its KVM_RUN loop
    bool stop = false;    // stop_all asked
    Exit exit = Exit::kNone;
    std::string why;
  };
  static void* thread_main(void* arg);
  void loop(Cpu& c);
  Exit run_until_exit(Cpu& c, std::string* why);

  DirtyTracker& tracker_;
  std::function<void()> on_exit_;
  std::vector<std::unique_ptr<Cpu>> cpus_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool quit_ = false;
};

}  // namespace vmha
