// Dynamically linked programs under `vmha run`: ld.so is loaded beside the
// program through the confinement policy, and Debian's own tools (sort,
// md5sum, gzip, ls), a dynamically linked C program built here
// (tests/vmha/dyn_probe.c) and python3 print exactly what they print
// natively. The loaded libraries are guest memory: a snapshot taken in the
// middle of ld.so's work resumes in a fresh VM from the bytes alone. An
// interpreter outside the policy, or missing, is refused naming its path.
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "tests/vmha/vmha_test_util.h"

#include <check.h>  // last: it defines a fail() macro
#include "tests/unit/run_suite.h"

namespace {

std::string g_dir;

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

void setup() {
  g_dir = vmha_test::make_temp_dir();
  // Lines of pseudo-random words: enough for sort to spill nothing and for
  // gzip to work a little.
  std::ofstream f(g_dir + "/data.txt");
  unsigned x = 2463534242u;
  for (int i = 0; i < 20000; ++i) {
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    f << "line " << (x % 100000) << " word" << (x % 977) << "\n";
  }
  for (const char* name : {"b.txt", "a.txt", "c.dat"}) std::ofstream(g_dir + "/" + name) << name << "\n";
  mkdir((g_dir + "/sub").c_str(), 0755);
}
void teardown() { std::system(("rm -rf " + g_dir).c_str()); }

std::string dyn_probe() { return vmha_test::builddir() + "/tests/vmha/dyn_probe"; }

// Runs argv natively and under vmha in g_dir: the same stdout and exit
// status, and no system call vmha does not serve.
void same_as_native(const std::vector<std::string>& argv, const std::vector<std::string>& vmha_opts = {}) {
  vmha_test::Captured native = vmha_test::run_capture(argv, g_dir);
  std::vector<std::string> vm = {vmha_test::vmha_bin(), "run"};
  vm.insert(vm.end(), vmha_opts.begin(), vmha_opts.end());
  vm.push_back("--");
  vm.insert(vm.end(), argv.begin(), argv.end());
  vmha_test::Captured c = vmha_test::run_capture(vm, g_dir);
  ck_assert_msg(native.exit_code() == 0, "%s natively: exit %d: %s", argv[0].c_str(), native.exit_code(),
                native.err.c_str());
  ck_assert_msg(c.exit_code() == native.exit_code(), "%s: exit %d under vmha: %s", argv[0].c_str(), c.exit_code(),
                c.err.c_str());
  ck_assert_msg(c.out == native.out, "%s: output differs (%zu bytes under vmha, %zu natively): %s", argv[0].c_str(),
                c.out.size(), native.out.size(), c.err.c_str());
  ck_assert_msg(!contains(c.err, "unsupported system call"), "%s: %s", argv[0].c_str(), c.err.c_str());
}

START_TEST(debian_tools_match_native) {
  const std::vector<std::vector<std::string>> runs = {{"/usr/bin/sort", "data.txt"},
                                                      {"/usr/bin/sort", "-n", "-r", "-k2", "data.txt"},
                                                      {"/usr/bin/md5sum", "data.txt", "a.txt"},
                                                      {"/usr/bin/gzip", "-c", "-6", "data.txt"},
                                                      {"/bin/ls"},
                                                      {"/bin/ls", "-1", "-F", g_dir}};
  for (const std::vector<std::string>& argv : runs)
    SKIP_UNLESS(test_support::have_program(argv[0]), argv[0] + " is missing");
  for (const std::vector<std::string>& argv : runs) same_as_native(argv);
}
END_TEST

START_TEST(dynamic_c_program_matches_native) {
  same_as_native({dyn_probe()});
  vmha_test::Captured c = vmha_test::run_capture({dyn_probe()}, g_dir);
  ck_assert_msg(contains(c.out, "AT_BASE set: yes\n") && contains(c.out, "dlopen libutil.so.1: ok\n"), "%s",
                c.out.c_str());
}
END_TEST

START_TEST(python_runs) {
  SKIP_UNLESS(test_support::have_program("/usr/bin/python3"), "/usr/bin/python3 is missing");
  same_as_native({"/usr/bin/python3", "-c", "print(sum(range(10**6)))"});
  same_as_native({"/usr/bin/python3", "-c",
                  "import json, hashlib, zlib\n"
                  "b = zlib.compress(json.dumps([i * i for i in range(5000)]).encode())\n"
                  "print(len(b), hashlib.sha256(b).hexdigest())"});
}
END_TEST

// The snapshot holds the libraries ld.so mapped: a fresh VM restored from
// it (no host file read again) finishes with the native output.
START_TEST(snapshot_inside_the_dynamic_loader_resumes) {
  vmha_test::Captured native = vmha_test::run_capture({"/usr/bin/md5sum", "data.txt"}, g_dir);
  for (const char* at : {"5", "30", "60"}) {
    vmha_test::Captured c = vmha_test::run_capture(
        {vmha_test::vmha_bin(), "run", "--snapshot-at-syscall", at, "--restore", "--", "/usr/bin/md5sum", "data.txt"},
        g_dir);
    ck_assert_msg(c.exit_code() == 0 && c.out == native.out, "snapshot at %s: exit %d, out '%s': %s", at, c.exit_code(),
                  c.out.c_str(), c.err.c_str());
  }
}
END_TEST

START_TEST(interpreter_outside_the_policy_is_named) {
  // /lib64 is not in this policy.
  vmha_test::Captured c = vmha_test::run_capture(
      {vmha_test::vmha_bin(), "run", "--no-default-ro", "--ro", "/usr", "--", dyn_probe()}, g_dir);
  ck_assert_int_eq(c.exit_code(), 125);
  ck_assert_msg(contains(c.err, "interpreter /lib64/ld-linux-x86-64.so.2 is outside the confinement policy") &&
                    contains(c.err, "--ro"),
                "%s", c.err.c_str());
  // /lib64 is, but Debian's loader there is a symlink into /lib, which is not:
  // the link is followed to its target and the target checked.
  char target[256];
  ssize_t n = readlink("/lib64/ld-linux-x86-64.so.2", target, sizeof target);
  if (n > 0 && target[0] == '/') {
    c = vmha_test::run_capture({vmha_test::vmha_bin(), "run", "--no-default-ro", "--ro", "/lib64", "--", dyn_probe()},
                               g_dir);
    ck_assert_int_eq(c.exit_code(), 125);
    ck_assert_msg(contains(c.err, "interpreter /lib64/ld-linux-x86-64.so.2 is outside the confinement policy"), "%s",
                  c.err.c_str());
  }
  // A program whose interpreter does not exist: its path and the error.
  std::string prog = vmha_test::slurp(dyn_probe());
  size_t at = prog.find("/lib64/ld-linux-x86-64.so.2");
  ck_assert(at != std::string::npos);
  prog[at + std::string("/lib64/ld-linux-x86-64.so.").size()] = '9';
  std::string copy = g_dir + "/no_loader";
  std::ofstream(copy, std::ios::binary) << prog;
  chmod(copy.c_str(), 0755);
  c = vmha_test::run_capture({vmha_test::vmha_bin(), "run", "--", copy}, g_dir);
  ck_assert_int_eq(c.exit_code(), 125);
  ck_assert_msg(contains(c.err, "interpreter /lib64/ld-linux-x86-64.so.9: No such file or directory"), "%s",
                c.err.c_str());
}
END_TEST

}  // namespace

int main() {
  vmha_test::require_kvm();
  Suite* s = suite_create("vmha_dynamic");
  TCase* tc = tcase_create("dynamic");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, debian_tools_match_native);
  tcase_add_test(tc, dynamic_c_program_matches_native);
  tcase_add_test(tc, python_runs);
  tcase_add_test(tc, snapshot_inside_the_dynamic_loader_resumes);
  tcase_add_test(tc, interpreter_outside_the_policy_is_named);
  suite_add_tcase(s, tc);
  return test_support::run_suite(s);
}
