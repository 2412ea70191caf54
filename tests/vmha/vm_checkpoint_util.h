// A checkpoint in the middle of a guest program, for the vmha Check suites:
// run it in a VM until its first system call `nr` (a marker the program
// makes, getppid() say), save the VM, and later finish the saved state in a
// fresh VM. The suites that use this link the VM libraries.
#pragma once
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "vmha/vmm/elf_image.h"
#include "vmha/vmm/vm.h"
#include "tests/vmha/vmha_test_util.h"

#include <check.h>  // last: it defines a fail() macro

namespace vmha_test {

inline std::vector<uint8_t> state_at_syscall(const vmha::VmOptions& opts, const std::string& program,
                                             const std::vector<std::string>& argv, uint64_t nr) {
  vmha::ElfImage img;
  ck_assert(vmha::read_elf_file(program, &img).ok());
  std::unique_ptr<vmha::Vm> vm;
  ck_assert(vmha::Vm::create(opts, &vm).ok());
  ck_assert(vm->load(img, program, argv, {}).ok());
  vm->set_syscall_hook([nr](vmha::Vm&, uint64_t n, uint64_t) {
    return n == nr ? vmha::HookAction::kStop : vmha::HookAction::kContinue;
  });
  vmha::RunResult r = vm->run();
  ck_assert_msg(r.end == vmha::RunResult::End::kStopped, "end %d %s", static_cast<int>(r.end), r.message.c_str());
  std::vector<uint8_t> state;
  vmha::Status s = vm->save(&state);
  ck_assert_msg(s.ok(), "%s", s.message().c_str());
  return state;
}

// Restores `state` into a fresh VM that runs the program to exit status 0.
inline void restore_and_finish(const vmha::VmOptions& opts, const std::vector<uint8_t>& state) {
  std::unique_ptr<vmha::Vm> back;
  vmha::Status s = vmha::Vm::restore(opts, state, &back);
  ck_assert_msg(s.ok(), "%s", s.message().c_str());
  vmha::RunResult r = back->run();
  ck_assert_msg(r.end == vmha::RunResult::End::kExited && r.code == 0, "end %d code %d %s", static_cast<int>(r.end),
                r.code, r.message.c_str());
}

// What `argv` (argv[0]: the program, by its absolute path) prints when its
// VM is saved at its first system call `nr` and finished from that state:
// a fresh working directory, the program's folder read-only. *saved (when
// given) gets the state and *used the options it was restored with.
inline std::string output_across_checkpoint(const std::vector<std::string>& argv, uint64_t nr,
                                            std::vector<uint8_t>* saved = nullptr, vmha::VmOptions* used = nullptr) {
  const std::string dir = make_temp_dir();
  int out = open((dir + "/out").c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  ck_assert_int_ge(out, 0);
  vmha::VmOptions opts;
  opts.memory_bytes = 256 << 20;
  opts.workdir = dir;
  opts.std_fds[1] = out;
  char* folder = realpath(argv[0].substr(0, argv[0].rfind('/')).c_str(), nullptr);
  ck_assert_msg(folder != nullptr, "%s: no such folder", argv[0].c_str());
  opts.read_only.push_back(folder);
  free(folder);
  const std::vector<uint8_t> state = state_at_syscall(opts, argv[0], argv, nr);
  restore_and_finish(opts, state);
  close(out);
  opts.std_fds[1] = STDOUT_FILENO;  // `out` is closed
  if (saved) *saved = state;
  if (used) *used = opts;
  return slurp(dir + "/out");
}

}  // namespace vmha_test
