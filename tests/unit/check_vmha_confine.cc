// Confinement and refusals: the guest cannot open a path outside its working
// directory (.., absolute paths, symlinks out); an unsupported system call
// gets ENOSYS with exactly one log line; dynamic and malformed executables
// are refused by `vmha run` with a clear message.
#include <sys/stat.h>
#include <unistd.h>

#include <string>

#include "tests/vmha/vmha_test_util.h"

#include <check.h>

namespace {

bool contains(const std::string& s, const std::string& what) { return s.find(what) != std::string::npos; }

START_TEST(paths_outside_the_workdir_are_refused) {
  std::string outer = vmha_test::make_temp_dir();
  std::string dir = outer + "/job";
  ck_assert_int_eq(mkdir(dir.c_str(), 0755), 0);
  FILE* f = std::fopen((outer + "/secret").c_str(), "w");
  std::fputs("secret\n", f);
  std::fclose(f);
  f = std::fopen((outer + "/victim").c_str(), "w");
  std::fclose(f);
  f = std::fopen((dir + "/inside.txt").c_str(), "w");
  std::fputs("inside\n", f);
  std::fclose(f);
  ck_assert_int_eq(symlink("../secret", (dir + "/link_out").c_str()), 0);
  ck_assert_int_eq(symlink((outer + "/secret").c_str(), (dir + "/abs_link_out").c_str()), 0);
  ck_assert_int_eq(symlink("inside.txt", (dir + "/link_in").c_str()), 0);

  std::string probe = vmha_test::builddir() + "/tests/vmha/confine_probe";
  vmha_test::Captured c = vmha_test::run_capture(
      {vmha_test::vmha_bin(), "run", "--", probe, "inside.txt", "link_in", dir + "/inside.txt", "../secret",
       outer + "/secret", "/etc/passwd", "link_out", "abs_link_out", "sub/../../secret", "/dev/null"},
      dir);
  ck_assert_msg(c.exit_code() == 0, "probe exited %d: %s", c.exit_code(), c.err.c_str());
  ck_assert_msg(contains(c.out, "open inside.txt: ok\n"), "%s", c.out.c_str());
  ck_assert_msg(contains(c.out, "open link_in: ok\n"), "%s", c.out.c_str());
  ck_assert_msg(contains(c.out, "open " + dir + "/inside.txt: ok\n"), "absolute path inside refused: %s", c.out.c_str());
  ck_assert_msg(contains(c.out, "open ../secret: EACCES\n"), "%s", c.out.c_str());
  ck_assert_msg(contains(c.out, "open " + outer + "/secret: EACCES\n"), "%s", c.out.c_str());
  ck_assert_msg(contains(c.out, "open /etc/passwd: EACCES\n"), "%s", c.out.c_str());
  ck_assert_msg(contains(c.out, "open link_out: EACCES\n"), "%s", c.out.c_str());
  ck_assert_msg(contains(c.out, "open abs_link_out: EACCES\n"), "%s", c.out.c_str());
  ck_assert_msg(contains(c.out, "open sub/../../secret: "), "%s", c.out.c_str());
  ck_assert_msg(!contains(c.out, "open sub/../../secret: ok"), "%s", c.out.c_str());
  ck_assert_msg(contains(c.out, "open /dev/null: ok\n"), "%s", c.out.c_str());
  ck_assert_msg(contains(c.out, "stat ../: EACCES\n"), "%s", c.out.c_str());
  ck_assert_msg(contains(c.out, "create inside: ok\n"), "%s", c.out.c_str());
  ck_assert_msg(contains(c.out, "unlink ../victim: EACCES\n"), "%s", c.out.c_str());
  ck_assert_msg(contains(c.out, "rename out: EACCES\n"), "%s", c.out.c_str());
  ck_assert_int_eq(access((outer + "/victim").c_str(), F_OK), 0);
  ck_assert_int_eq(access((dir + "/created.txt").c_str(), F_OK), 0);
}
END_TEST

START_TEST(unsupported_syscall_is_enosys_logged_once) {
  std::string dir = vmha_test::make_temp_dir();
  std::string probe = vmha_test::builddir() + "/tests/vmha/confine_probe";
  vmha_test::Captured c = vmha_test::run_capture({vmha_test::vmha_bin(), "run", "--", probe}, dir);
  ck_assert_int_eq(c.exit_code(), 0);
  ck_assert_msg(contains(c.out, "syscall 999: ENOSYS\nsyscall 999 again: ENOSYS\n"), "%s", c.out.c_str());
  size_t first = c.err.find("unsupported system call 999");
  ck_assert_msg(first != std::string::npos, "no log line: %s", c.err.c_str());
  ck_assert_msg(c.err.find("unsupported system call 999", first + 1) == std::string::npos, "logged twice: %s", c.err.c_str());
}
END_TEST

START_TEST(dynamic_and_malformed_programs_are_refused) {
  std::string dir = vmha_test::make_temp_dir();
  vmha_test::Captured c = vmha_test::run_capture({vmha_test::vmha_bin(), "run", "--", "/bin/sh", "-c", "true"}, dir);
  ck_assert_int_eq(c.exit_code(), 125);
  ck_assert_msg(contains(c.err, "dynamically linked") && contains(c.err, "gcc -static"), "%s", c.err.c_str());
  FILE* f = std::fopen((dir + "/garbage").c_str(), "w");
  std::fputs("#!/bin/sh\n# a shell script is not an ELF executable, however long it is\necho not an ELF\n", f);
  std::fclose(f);
  c = vmha_test::run_capture({vmha_test::vmha_bin(), "run", "--", dir + "/garbage"}, dir);
  ck_assert_int_eq(c.exit_code(), 125);
  ck_assert_msg(contains(c.err, "garbage: not an executable file"), "%s", c.err.c_str());  // as execve: EACCES
  // Executable: its #! interpreter is loaded, and /bin/sh is dynamic.
  chmod((dir + "/garbage").c_str(), 0755);
  c = vmha_test::run_capture({vmha_test::vmha_bin(), "run", "--", dir + "/garbage"}, dir);
  ck_assert_int_eq(c.exit_code(), 125);
  ck_assert_msg(contains(c.err, "dynamically linked"), "%s", c.err.c_str());
  f = std::fopen((dir + "/text").c_str(), "w");
  std::fputs("neither an ELF executable nor a #! script, and longer than an ELF header is\n", f);
  std::fclose(f);
  chmod((dir + "/text").c_str(), 0755);
  c = vmha_test::run_capture({vmha_test::vmha_bin(), "run", "--", dir + "/text"}, dir);
  ck_assert_int_eq(c.exit_code(), 125);
  ck_assert_msg(contains(c.err, "no ELF magic"), "%s", c.err.c_str());
}
END_TEST

START_TEST(exit_status_and_signals_are_the_programs) {
  std::string dir = vmha_test::make_temp_dir();
  vmha_test::Captured c = vmha_test::run_capture({vmha_test::vmha_bin(), "run", "--", "/bin/busybox", "sh", "-c", "exit 3"}, dir);
  // busybox sh forks for nothing here; exit 3 comes straight from the shell.
  ck_assert_msg(c.exit_code() == 3, "exit %d: %s", c.exit_code(), c.err.c_str());
  c = vmha_test::run_capture({vmha_test::vmha_bin(), "run", "--", "/bin/busybox", "false"}, dir);
  ck_assert_int_eq(c.exit_code(), 1);
  c = vmha_test::run_capture({vmha_test::vmha_bin(), "run", "--", "/bin/busybox", "kill", "-SEGV", "0"}, dir);
  ck_assert_msg(c.term_signal() == SIGSEGV, "status %d: %s", c.status, c.err.c_str());
  // A shell running a command must start a process: a clear refusal.
  c = vmha_test::run_capture({vmha_test::vmha_bin(), "run", "--", "/bin/busybox", "sh", "-c", "/bin/busybox true; echo after"}, dir);
  ck_assert_msg(contains(c.err, "single-threaded programs only"), "no clear error for fork/exec: %s", c.err.c_str());
}
END_TEST

}  // namespace

int main() {
  vmha_test::require_kvm();
  vmha_test::require_busybox();
  Suite* s = suite_create("vmha_confine");
  TCase* tc = tcase_create("confine");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, paths_outside_the_workdir_are_refused);
  tcase_add_test(tc, unsupported_syscall_is_enosys_logged_once);
  tcase_add_test(tc, dynamic_and_malformed_programs_are_refused);
  tcase_add_test(tc, exit_status_and_signals_are_the_programs);
  suite_add_tcase(s, tc);
  SRunner* sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? 1 : 0;
}
