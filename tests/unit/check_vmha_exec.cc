// What `vmha run -- PROGRAM` loads: a bare name is searched in PATH, and a
// `#!` script runs its interpreter (Linux's rules: one optional argument,
// four levels at most); end to end, a busybox script and a workload found
// through PATH run in the VM.
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "tests/vmha/vmha_test_util.h"
#include "vmha/vmm/exec_resolve.h"

#include <check.h>  // last: it defines a fail() macro
#include "tests/unit/run_suite.h"

using namespace vmha;

namespace {

std::string g_dir;

std::string write_script(const std::string& name, const std::string& text, mode_t mode = 0755) {
  std::string p = g_dir + "/" + name;
  std::ofstream(p) << text;
  chmod(p.c_str(), mode);
  return p;
}

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

void setup() { g_dir = vmha_test::make_temp_dir(); }
void teardown() { std::system(("rm -rf " + g_dir).c_str()); }

START_TEST(bare_name_is_searched_in_path) {
  std::string prog = write_script("tool",
                                  "\x7f"
                                  "ELF");
  ExecPlan plan;
  Status s = resolve_exec({"tool", "a"}, "/nonexistent::" + g_dir, &plan);
  ck_assert_msg(s.ok(), "%s", s.message().c_str());
  ck_assert_str_eq(plan.path.c_str(), prog.c_str());
  ck_assert_int_eq(plan.argv.size(), 2);
  ck_assert_str_eq(plan.argv[0].c_str(), "tool");  // argv[0] as typed, like execvp
  s = resolve_exec({"no-such-tool"}, g_dir, &plan);
  ck_assert_msg(contains(s.message(), "no-such-tool: command not found in PATH (" + g_dir + ")"), "%s",
                s.message().c_str());
  write_script("plain", "data", 0644);
  s = resolve_exec({g_dir + "/plain"}, "", &plan);
  ck_assert_msg(contains(s.message(), "plain: not an executable file"), "%s", s.message().c_str());
}
END_TEST

START_TEST(shebang_runs_the_interpreter) {
  std::string interp = write_script("interp",
                                    "\x7f"
                                    "ELF");
  std::string script = write_script("job.sh", "#!" + interp + "  -x  -y \r\necho hi\n");
  ExecPlan plan;
  Status s = resolve_exec({script, "one", "two"}, "", &plan);
  ck_assert_msg(s.ok(), "%s", s.message().c_str());
  ck_assert_str_eq(plan.path.c_str(), interp.c_str());
  std::vector<std::string> want = {interp, "-x  -y", script, "one", "two"};
  ck_assert_int_eq(plan.argv.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) ck_assert_str_eq(plan.argv[i].c_str(), want[i].c_str());
  // A script as another script's interpreter: nested, as Linux does.
  std::string outer = write_script("outer.sh", "#!" + script + "\n");
  s = resolve_exec({outer}, "", &plan);
  ck_assert_msg(s.ok(), "%s", s.message().c_str());
  ck_assert_str_eq(plan.path.c_str(), interp.c_str());
  want = {interp, "-x  -y", script, outer};
  ck_assert_int_eq(plan.argv.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) ck_assert_str_eq(plan.argv[i].c_str(), want[i].c_str());
}
END_TEST

START_TEST(bad_shebangs_are_refused) {
  ExecPlan plan;
  std::string loop = write_script("loop.sh", "#!" + g_dir + "/loop.sh\n");
  Status s = resolve_exec({loop}, "", &plan);
  ck_assert_msg(contains(s.message(), "more than 4 nested #! interpreters"), "%s", s.message().c_str());
  s = resolve_exec({write_script("none.sh", "#!   \n")}, "", &plan);
  ck_assert_msg(contains(s.message(), "#! names no interpreter"), "%s", s.message().c_str());
  s = resolve_exec({write_script("gone.sh", "#!/no/such/interp\n")}, "", &plan);
  ck_assert_msg(contains(s.message(), "interpreter /no/such/interp: No such file or directory"), "%s",
                s.message().c_str());
  s = resolve_exec({write_script("long.sh", "#!" + std::string(300, 'a') + "\n")}, "", &plan);
  ck_assert_msg(contains(s.message(), "#! line longer than 255 bytes"), "%s", s.message().c_str());
}
END_TEST

// End to end in the VM (needs KVM and busybox-static).
START_TEST(script_and_path_search_run_in_the_vm) {
  SKIP_UNLESS(vmha_test::kvm_for_test(), "no /dev/kvm on this host");
  SKIP_UNLESS(test_support::have_program("/bin/busybox"), "/bin/busybox is missing (Debian: busybox-static)");
  std::string script = write_script("hello.sh", "#!/bin/busybox sh\necho \"hello $1\"\n");
  auto c = vmha_test::run_capture({vmha_test::vmha_bin(), "run", "--", script, "world"}, g_dir);
  ck_assert_msg(c.exit_code() == 0 && c.out == "hello world\n", "exit %d, out '%s', err '%s'", c.exit_code(),
                c.out.c_str(), c.err.c_str());
  std::string path = std::string("PATH=") + vmha_test::workload("");
  auto d =
      vmha_test::run_capture({"/usr/bin/env", path, vmha_test::vmha_bin(), "run", "--", "stream", "1000", "1"}, g_dir);
  ck_assert_msg(d.exit_code() == 0 && contains(d.out, "stream n=1000 reps=1"), "exit %d, out '%s', err '%s'",
                d.exit_code(), d.out.c_str(), d.err.c_str());
}
END_TEST

}  // namespace

int main() {
  Suite* s = suite_create("vmha_exec");
  TCase* tc = tcase_create("resolve");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, bare_name_is_searched_in_path);
  tcase_add_test(tc, shebang_runs_the_interpreter);
  tcase_add_test(tc, bad_shebangs_are_refused);
  tcase_add_test(tc, script_and_path_search_run_in_the_vm);
  suite_add_tcase(s, tc);
  return test_support::run_suite(s);
}
