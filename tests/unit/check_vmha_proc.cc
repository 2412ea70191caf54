// /proc/self views (vmha/sys/proc_views.h): tests/vmha/proc_probe.c reads
// /proc/self/exe, /proc/PID/exe, /proc/self/cwd, fd links and the fd
// directory, and prints the same facts under `vmha run` as natively; after
// execve, /proc/self/exe names the new program; Python lists /proc/self/fd
// and reads its own exe; a VM checkpointed between two parts of the fd
// listing (state version 5, with the program's path) is restored into a
// fresh VM that reads the rest of the listing and still knows its exe.
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstring>
#include <string>
#include <vector>

#include "tests/vmha/vm_checkpoint_util.h"
#include "tests/vmha/vmha_test_util.h"
#include "vmha/state/vm_state.h"
#include "vmha/vmm/elf_image.h"
#include "vmha/vmm/vm.h"

#include <check.h>  // last: it defines a fail() macro
#include "tests/unit/run_suite.h"

using namespace vmha;

namespace {

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

std::string canonical(const std::string& path) {
  char real[PATH_MAX];
  ck_assert_msg(realpath(path.c_str(), real) != nullptr, "%s is missing", path.c_str());
  return real;
}
std::string probe() { return canonical(vmha_test::builddir() + "/tests/vmha/proc_probe"); }
std::string probe_dir() { return probe().substr(0, probe().rfind('/')); }

// argv natively and under `vmha run` (the probe's folder read-only), each in
// a directory of its own: the same stdout, both exit 0.
std::string same_as_native(const std::vector<std::string>& argv) {
  vmha_test::Captured native = vmha_test::run_capture(argv, vmha_test::make_temp_dir());
  std::vector<std::string> vm = {vmha_test::vmha_bin(), "run", "--ro", probe_dir(), "--"};
  vm.insert(vm.end(), argv.begin(), argv.end());
  vmha_test::Captured c = vmha_test::run_capture(vm, vmha_test::make_temp_dir());
  ck_assert_msg(native.exit_code() == 0, "%s natively: exit %d: %s", argv[0].c_str(), native.exit_code(),
                native.err.c_str());
  ck_assert_msg(c.exit_code() == 0, "%s: exit %d under vmha: %s", argv[0].c_str(), c.exit_code(), c.err.c_str());
  ck_assert_msg(c.out == native.out, "%s:\nunder vmha:\n%s\nnatively:\n%s\n%s", argv[0].c_str(), c.out.c_str(),
                native.out.c_str(), c.err.c_str());
  return c.out;
}

START_TEST(probe_reads_itself_as_natively) {
  const std::string out = same_as_native({probe()});
  ck_assert_msg(contains(out, "exe is the program: yes\n") && contains(out, "listing in two parts: yes\n") &&
                    !contains(out, ": NO\n"),
                "%s", out.c_str());
}
END_TEST

START_TEST(exe_names_the_program_after_execve) {
  SKIP_UNLESS(test_support::have_program("/usr/bin/readlink"), "/usr/bin/readlink is missing");
  const std::string out = same_as_native({probe(), "exec"}), want = canonical("/usr/bin/readlink") + "\n";
  ck_assert_str_eq(out.c_str(), want.c_str());
}
END_TEST

START_TEST(python_lists_its_descriptors) {
  SKIP_UNLESS(test_support::have_program("/usr/bin/python3"), "/usr/bin/python3 is missing");
  const std::string out = same_as_native(
      {"/usr/bin/python3", "-c",
       "import os, sys\n"
       "print(os.readlink('/proc/self/exe') == os.path.realpath(sys.executable))\n"
       "fd = os.open('f', os.O_WRONLY | os.O_CREAT)\n"
       "print(str(fd) in os.listdir('/proc/self/fd'), os.readlink('/proc/self/fd/%d' % fd) == os.getcwd() + '/f')\n"});
  ck_assert_str_eq(out.c_str(), "True\nTrue True\n");
}
END_TEST

START_TEST(checkpoint_keeps_exe_and_the_listing_position) {
  const std::string want = vmha_test::run_capture({probe()}, vmha_test::make_temp_dir()).out;
  std::vector<uint8_t> state;
  VmOptions opts;
  const std::string got = vmha_test::output_across_checkpoint({probe()}, SYS_getppid, &state, &opts);
  uint32_t version = 0;
  std::memcpy(&version, state.data() + 8, 4);
  ck_assert_uint_eq(version, 5);
  ck_assert_msg(got == want, "restored:\n%s\nnative:\n%s", got.c_str(), want.c_str());
  // A state cut anywhere in its names or fd sections is refused.
  for (size_t cut = state.size() / 2; cut < state.size(); cut += state.size() / 16) {
    std::vector<uint8_t> part(state.begin(), state.begin() + static_cast<long>(cut));
    std::unique_ptr<Vm> back;
    ck_assert(!Vm::restore(opts, part, &back).ok());
  }
}
END_TEST

}  // namespace

int main() {
  vmha_test::require_kvm();
  Suite* s = suite_create("vmha_proc");
  TCase* tc = tcase_create("proc");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, probe_reads_itself_as_natively);
  tcase_add_test(tc, exe_names_the_program_after_execve);
  tcase_add_test(tc, python_lists_its_descriptors);
  tcase_add_test(tc, checkpoint_keeps_exe_and_the_listing_position);
  suite_add_tcase(s, tc);
  return test_support::run_suite(s);
}
