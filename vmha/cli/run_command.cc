#include "vmha/cli/run_command.h"

#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <cstdio>
#include <cstdlib>
#include <fstream>

#include "vmha/cli/replicated_run.h"
#include "vmha/common/run_stats.h"
#include "vmha/engine/guest_exit.h"
#include "vmha/vmm/exec_resolve.h"
#include "vmha/vmm/vm.h"

extern char** environ;

namespace vmha {

namespace {

int fail(const std::string& message) {
  std::fprintf(stderr, "vmha: %s\n", message.c_str());
  return 125;
}

// Runs the guest until it ends or reaches --snapshot-at-syscall or
// --snapshot-after-ms (then kStopped).
RunResult run_to_snapshot_point(Vm& vm, const RunCommandOptions& o) {
  if (o.snapshot_at_syscall)
    vm.set_syscall_hook([at = o.snapshot_at_syscall](Vm&, uint64_t, uint64_t count) {
      return count == at ? HookAction::kStop : HookAction::kContinue;
    });
  std::thread stopper;
  std::mutex stop_mu;
  std::condition_variable stop_cv;
  bool run_over = false;
  if (o.snapshot_after_ms) {
    Vm* target = &vm;
    stopper = std::thread([&, target] {
      std::unique_lock<std::mutex> lock(stop_mu);
      if (!stop_cv.wait_for(lock, std::chrono::milliseconds(o.snapshot_after_ms), [&] { return run_over; }))
        target->request_stop();
    });
  }
  RunResult r = vm.run();
  if (stopper.joinable()) {
    {
      std::lock_guard<std::mutex> lock(stop_mu);
      run_over = true;
    }
    stop_cv.notify_all();
    stopper.join();
  }
  return r;
}

// --stats: run time, system calls and what the tracker saw last.
void print_stats(Vm& vm, std::chrono::steady_clock::time_point t0, uint64_t syscalls) {
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::vector<uint64_t> pages;
  (void)vm.tracker().harvest(pages);
  TrackerStats ts = vm.tracker().stats();
  std::fprintf(stderr,
               "vmha: %.3f s, %llu system calls (%.0f/s), tracker %s: %llu guest + %llu VMM pages dirty in the last "
               "harvest window\n",
               s, static_cast<unsigned long long>(syscalls), syscalls / s, tracker_name(vm.tracker().kind()),
               static_cast<unsigned long long>(ts.guest_pages), static_cast<unsigned long long>(ts.vmm_pages));
}

}  // namespace

int run_command(const RunCommandOptions& o) {
  if (o.argv.empty()) return fail("run: no program given (usage: vmha run [options] -- PROGRAM ARGS...)");
  // Checked here so 0 or an absurd size is not first met inside mmap (or
  // wraps when shifted to bytes).
  if (Status s = check_memory_mib(o.memory_mib); !s.ok()) return fail("--memory: " + s.message());
  if (Status s = check_vcpus(o.vcpus); !s.ok()) return fail("--vcpus: " + s.message());
  if (!o.backup.empty()) return run_replicated(o);
  signal(SIGPIPE, SIG_IGN);  // the guest gets EPIPE and SIGPIPE's default action from the VMM
  VmOptions vo;
  if (Status s = parse_tracker_kind(o.tracker, &vo.tracker); !s.ok()) return fail(s.message());
  vo.workdir = o.workdir;
  vo.read_only = o.read_only;
  vo.memory_bytes = o.memory_mib << 20;
  vo.vcpus = static_cast<int>(o.vcpus);
  vo.relay_host_signals = true;  // SIGTERM and friends go to the guest (vmha(1) SIGNALS)
  vo.run_id = new_run_id();      // its private /tmp and /dev/shm
  ExecPlan plan;
  const char* path_env = std::getenv("PATH");
  if (Status s = resolve_exec(o.argv, path_env ? path_env : "", &plan); !s.ok()) return fail(s.message());
  ElfImage image;
  if (Status s = read_elf_file(plan.path, &image); !s.ok()) return fail(s.message());
  std::unique_ptr<Vm> vm;
  if (Status s = Vm::create(vo, &vm); !s.ok()) return fail(s.message());
  std::vector<std::string> envp;
  for (char** e = environ; *e; ++e) envp.push_back(*e);
  if (Status s = vm->load(image, plan.path, plan.argv, envp); !s.ok()) return fail(s.message());

  auto t0 = std::chrono::steady_clock::now();
  RunResult r = run_to_snapshot_point(*vm, o);
  uint64_t syscalls = vm->syscalls();
  if (r.end == RunResult::End::kStopped) {
    std::vector<uint8_t> bytes;
    if (Status s = vm->save(&bytes); !s.ok()) return fail("snapshot: " + s.message());
    if (!o.snapshot_file.empty()) {
      std::ofstream f(o.snapshot_file, std::ios::binary);
      f.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
      if (!f) return fail("cannot write snapshot " + o.snapshot_file);
    }
    if (!o.restore)
      return fail("stopped after " + std::to_string(syscalls) + " system calls (use --restore to continue)");
    vm.reset();  // the old VM is gone: the guest continues only from the bytes
    if (Status s = Vm::restore(vo, bytes, &vm); !s.ok()) return fail("restore: " + s.message());
    vm->set_syscall_hook(nullptr);
    r = vm->run();
    syscalls += vm->syscalls();
  } else if ((o.snapshot_at_syscall || o.snapshot_after_ms) && r.end == RunResult::End::kExited) {
    std::fprintf(stderr, "vmha: note: the guest finished after %llu system calls, before the snapshot point\n",
                 static_cast<unsigned long long>(syscalls));
  }
  if (o.stats) print_stats(*vm, t0, syscalls);
  if (!o.stats_file.empty()) {
    RunStats local;
    local.side = RunStats::Side::kLocal;
    local.syscalls = syscalls;
    if (Status s = write_run_stats(o.stats_file, local); !s.ok())
      std::fprintf(stderr, "vmha: cannot write --stats-file: %s\n", s.message().c_str());
  }
  vm->process().root.remove_private();
  return exit_like_guest(r, "vmha");  // a shell sees the guest's status
}

}  // namespace vmha
