// Confinement and refusals: the guest cannot open a path outside its working
// directory (.., absolute paths, symlinks out) and the read-only paths of its
// policy (vmha(1) CONFINEMENT), and never writes under those; an unsupported system call
// gets ENOSYS with exactly one log line; malformed executables are refused
// by `vmha run` with a clear message; the size, mode, times and
// status flags of files behind inherited fds and devices stay unchanged.
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "tests/vmha/vmha_test_util.h"

#include <check.h>
#include "tests/unit/run_suite.h"

namespace {

bool contains(const std::string& s, const std::string& what) { return s.find(what) != std::string::npos; }

START_TEST(paths_outside_the_workdir_are_refused) {
  std::string outer = vmha_test::outside_tmp_dir();
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
       outer + "/secret", "/etc/hostname", "link_out", "abs_link_out", "sub/../../secret", "/dev/null"},
      dir);
  ck_assert_msg(c.exit_code() == 0, "probe exited %d: %s", c.exit_code(), c.err.c_str());
  ck_assert_msg(contains(c.out, "open inside.txt: ok\n"), "%s", c.out.c_str());
  ck_assert_msg(contains(c.out, "open link_in: ok\n"), "%s", c.out.c_str());
  ck_assert_msg(contains(c.out, "open " + dir + "/inside.txt: ok\n"), "absolute path inside refused: %s",
                c.out.c_str());
  ck_assert_msg(contains(c.out, "open ../secret: EACCES\n"), "%s", c.out.c_str());
  ck_assert_msg(contains(c.out, "open " + outer + "/secret: EACCES\n"), "%s", c.out.c_str());
  ck_assert_msg(contains(c.out, "open /etc/hostname: EACCES\n"), "%s", c.out.c_str());  // not a read-only path
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

// The policy's read-only paths (tests/vmha/ro_probe.c): readable, listable,
// never changed (EROFS as on a read-only mount); everything else outside the
// working directory EACCES, however it is named (.., symlinks, dirfds). An
// absolute symlink is followed when its target lies inside the policy (and
// keeps the target's rules: read-only stays read-only).
START_TEST(read_only_paths_are_read_never_written) {
  std::string outer = vmha_test::outside_tmp_dir();
  std::string dir = outer + "/job", ro = outer + "/ro";
  ck_assert_int_eq(mkdir(dir.c_str(), 0755), 0);
  ck_assert_int_eq(mkdir(ro.c_str(), 0755), 0);
  for (const std::string& path : {ro + "/data.txt", outer + "/secret", dir + "/mine.txt"}) {
    FILE* f = std::fopen(path.c_str(), "w");
    std::fputs("data\n", f);
    std::fclose(f);
  }
  ck_assert_int_eq(symlink("/etc/hostname", (dir + "/hostname_link").c_str()), 0);
  ck_assert_int_eq(symlink("../secret", (ro + "/out_link").c_str()), 0);
  ck_assert_int_eq(symlink("data.txt", (ro + "/in_link").c_str()), 0);
  ck_assert_int_eq(symlink("/etc/passwd", (dir + "/passwd_link").c_str()), 0);
  ck_assert_int_eq(symlink((ro + "/data.txt").c_str(), (ro + "/abs_in_link").c_str()), 0);
  ck_assert_int_eq(symlink((outer + "/secret").c_str(), (ro + "/abs_out_link").c_str()), 0);
  ck_assert_int_eq(symlink((ro + "/loop_b").c_str(), (ro + "/loop_a").c_str()), 0);
  ck_assert_int_eq(symlink((ro + "/loop_a").c_str(), (ro + "/loop_b").c_str()), 0);
  std::string usr_file = "/usr/bin/env";  // any regular file under /usr
  ck_assert_msg(access(usr_file.c_str(), R_OK) == 0, "%s missing", usr_file.c_str());
  struct stat before {};
  ck_assert_int_eq(stat("/etc/passwd", &before), 0);

  std::string probe = vmha_test::builddir() + "/tests/vmha/ro_probe";
  std::vector<std::string> ops = {"read:/etc/passwd",
                                  "read:" + usr_file,
                                  "list:/usr/bin",
                                  "stat:/usr",
                                  "accessr:/etc/passwd",
                                  "at:/usr:bin/env",
                                  "write:/etc/passwd",
                                  "trunc:/etc/passwd",
                                  "create:/usr/vmha_ro_probe_new",
                                  "excl:/etc/passwd",
                                  "unlink:/etc/passwd",
                                  "mkdir:/usr/vmha_ro_probe_dir",
                                  "mkdir:/usr/bin",
                                  "rmdir:/usr/bin",
                                  "rename:/etc/passwd:mine_too.txt",
                                  "rename:mine.txt:/usr/mine.txt",
                                  "chmod:/etc/passwd",
                                  "utime:/etc/passwd",
                                  "accessw:/etc/passwd",
                                  "fchmod:/etc/passwd",
                                  "fdwrite:/etc/passwd",
                                  "ftruncate:/etc/passwd",
                                  "read:/etc/shadow",
                                  "read:/etc/hostname",
                                  "list:/etc",
                                  "read:/home",
                                  "stat:/",
                                  "read:hostname_link",
                                  "read:/usr/../etc/hostname",
                                  "read:../secret",
                                  "at:/usr:../etc/hostname",
                                  "read:" + ro + "/data.txt",
                                  "create:mine.txt",
                                  "read:mine.txt",
                                  "read:passwd_link",
                                  "write:passwd_link",
                                  "lstat:passwd_link",
                                  "readlink:passwd_link",
                                  "read:/usr/../etc/passwd"};
  // Debian's dynamic loader is an absolute symlink from /lib64 into /lib.
  char target[256];
  ssize_t n = readlink("/lib64/ld-linux-x86-64.so.2", target, sizeof target);
  bool ld_link = n > 0 && target[0] == '/';
  if (ld_link) ops.push_back("read:/lib64/ld-linux-x86-64.so.2");
  vmha_test::Captured c = vmha_test::run_capture(
      [&] {
        std::vector<std::string> argv = {vmha_test::vmha_bin(), "run", "--", probe};
        argv.insert(argv.end(), ops.begin(), ops.end());
        return argv;
      }(),
      dir);
  ck_assert_msg(c.exit_code() == 0, "probe exited %d: %s", c.exit_code(), c.err.c_str());
  for (const std::string& line : std::vector<std::string>{"read /etc/passwd: ok\n",
                                                          "read " + usr_file + ": ok\n",
                                                          "list /usr/bin: ok\n",
                                                          "stat /usr: ok\n",
                                                          "accessr /etc/passwd: ok\n",
                                                          "at /usr:bin/env: ok\n",
                                                          "write /etc/passwd: EROFS\n",
                                                          "trunc /etc/passwd: EROFS\n",
                                                          "create /usr/vmha_ro_probe_new: EROFS\n",
                                                          "excl /etc/passwd: EEXIST\n",
                                                          "unlink /etc/passwd: EROFS\n",
                                                          "mkdir /usr/vmha_ro_probe_dir: EROFS\n",
                                                          "mkdir /usr/bin: EEXIST\n",
                                                          "rmdir /usr/bin: EROFS\n",
                                                          "rename /etc/passwd:mine_too.txt: EROFS\n",
                                                          "rename mine.txt:/usr/mine.txt: EROFS\n",
                                                          "chmod /etc/passwd: EROFS\n",
                                                          "utime /etc/passwd: EROFS\n",
                                                          "accessw /etc/passwd: EROFS\n",
                                                          "fchmod /etc/passwd: EROFS\n",
                                                          "fdwrite /etc/passwd: EBADF\n",
                                                          "ftruncate /etc/passwd: EINVAL\n",
                                                          "read /etc/shadow: EACCES\n",
                                                          "read /etc/hostname: EACCES\n",
                                                          "list /etc: EACCES\n",
                                                          "read /home: EACCES\n",
                                                          "stat /: ok\n",  // metadata above the roots
                                                          "read hostname_link: EACCES\n",
                                                          "read /usr/../etc/hostname: EACCES\n",
                                                          "read ../secret: EACCES\n",
                                                          "at /usr:../etc/hostname: EACCES\n",
                                                          "read " + ro + "/data.txt: EACCES\n",
                                                          "create mine.txt: ok\n",
                                                          "read mine.txt: ok\n",
                                                          "read passwd_link: ok\n",
                                                          "write passwd_link: EROFS\n",
                                                          "lstat passwd_link: ok\n",
                                                          "readlink passwd_link: ok\n",
                                                          "read /usr/../etc/passwd: ok\n",
                                                          ld_link ? "read /lib64/ld-linux-x86-64.so.2: ok\n" : "\n"})
    ck_assert_msg(contains(c.out, line), "expected \"%.*s\" in:\n%s", static_cast<int>(line.size() - 1), line.c_str(),
                  c.out.c_str());
  struct stat after {};
  ck_assert_int_eq(stat("/etc/passwd", &after), 0);
  ck_assert(after.st_mode == before.st_mode && after.st_size == before.st_size &&
            after.st_mtim.tv_sec == before.st_mtim.tv_sec && after.st_mtim.tv_nsec == before.st_mtim.tv_nsec);
  ck_assert_int_eq(access("/usr/vmha_ro_probe_new", F_OK), -1);
  ck_assert_int_eq(access("/usr/vmha_ro_probe_dir", F_OK), -1);
  ck_assert_int_eq(access((dir + "/mine.txt").c_str(), F_OK), 0);

  // --ro adds a path (read, never written; its symlinks stay beneath it);
  // --no-default-ro drops the defaults.
  c = vmha_test::run_capture(
      {vmha_test::vmha_bin(), "run", "--ro", ro, "--no-default-ro", "--", probe, "read:" + ro + "/data.txt",
       "read:" + ro + "/in_link", "list:" + ro, "write:" + ro + "/data.txt", "create:" + ro + "/new.txt",
       "unlink:" + ro + "/data.txt", "read:" + ro + "/out_link", "read:" + ro + "/../secret", "read:/etc/passwd",
       "read:" + usr_file, "read:" + ro + "/abs_in_link", "read:" + ro + "/abs_out_link", "read:" + ro + "/loop_a"},
      dir);
  ck_assert_msg(c.exit_code() == 0, "probe exited %d: %s", c.exit_code(), c.err.c_str());
  for (const std::string& line : std::vector<std::string>{
           "read " + ro + "/data.txt: ok\n", "read " + ro + "/in_link: ok\n", "list " + ro + ": ok\n",
           "write " + ro + "/data.txt: EROFS\n", "create " + ro + "/new.txt: EROFS\n",
           "unlink " + ro + "/data.txt: EROFS\n", "read " + ro + "/out_link: EACCES\n",
           "read " + ro + "/../secret: EACCES\n", "read /etc/passwd: EACCES\n", "read " + usr_file + ": EACCES\n",
           "read " + ro + "/abs_in_link: ok\n", "read " + ro + "/abs_out_link: EACCES\n",
           "read " + ro + "/loop_a: ELOOP\n"})
    ck_assert_msg(contains(c.out, line), "expected \"%.*s\" in:\n%s", static_cast<int>(line.size() - 1), line.c_str(),
                  c.out.c_str());
  ck_assert_int_eq(access((ro + "/data.txt").c_str(), F_OK), 0);
  ck_assert_int_eq(access((ro + "/new.txt").c_str(), F_OK), -1);

  // A relative --ro is refused before the guest starts.
  c = vmha_test::run_capture({vmha_test::vmha_bin(), "run", "--ro", "usr", "--", probe}, dir);
  ck_assert_int_eq(c.exit_code(), 125);
  ck_assert_msg(contains(c.err, "read-only path 'usr' is not absolute"), "%s", c.err.c_str());

  // The program's own options after "--" are its own, --ro or not (vmha-task
  // passes --ro; `srun busybox sh -c ...` once failed with exit 109).
  c = vmha_test::run_capture({vmha_test::vmha_bin(), "run", "--ro", ro, "--ro", "/usr", "--", probe, "-c", "x"}, dir);
  ck_assert_msg(c.exit_code() != 109 && !contains(c.err, "not expected"), "exit %d: %s", c.exit_code(), c.err.c_str());
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
  ck_assert_msg(c.err.find("unsupported system call 999", first + 1) == std::string::npos, "logged twice: %s",
                c.err.c_str());
  // A call Linux has is named, so the user sees what the program wanted.
  ck_assert_msg(contains(c.out, "ptrace: ENOSYS\n"), "%s", c.out.c_str());
  ck_assert_msg(contains(c.err, "unsupported system call ptrace (101)"), "%s", c.err.c_str());
}
END_TEST

START_TEST(malformed_programs_are_refused) {
  std::string dir = vmha_test::make_temp_dir();
  // A dynamically linked program runs (its interpreter through the policy).
  vmha_test::Captured c = vmha_test::run_capture({vmha_test::vmha_bin(), "run", "--", "/bin/sh", "-c", "exit 4"}, dir);
  ck_assert_msg(c.exit_code() == 4, "exit %d: %s", c.exit_code(), c.err.c_str());
  FILE* f = std::fopen((dir + "/garbage").c_str(), "w");
  std::fputs("#!/bin/sh\n# a shell script is not an ELF executable, however long it is\necho not an ELF\n", f);
  std::fclose(f);
  c = vmha_test::run_capture({vmha_test::vmha_bin(), "run", "--", dir + "/garbage"}, dir);
  ck_assert_int_eq(c.exit_code(), 125);
  ck_assert_msg(contains(c.err, "garbage: not an executable file"), "%s", c.err.c_str());  // as execve: EACCES
  // Executable: its #! interpreter (a dynamically linked /bin/sh) runs it.
  chmod((dir + "/garbage").c_str(), 0755);
  c = vmha_test::run_capture({vmha_test::vmha_bin(), "run", "--", dir + "/garbage"}, dir);
  ck_assert_msg(c.exit_code() == 0 && c.out == "not an ELF\n", "exit %d, out '%s': %s", c.exit_code(), c.out.c_str(),
                c.err.c_str());
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
  vmha_test::Captured c =
      vmha_test::run_capture({vmha_test::vmha_bin(), "run", "--", "/bin/busybox", "sh", "-c", "exit 3"}, dir);
  // busybox sh forks for nothing here; exit 3 comes straight from the shell.
  ck_assert_msg(c.exit_code() == 3, "exit %d: %s", c.exit_code(), c.err.c_str());
  c = vmha_test::run_capture({vmha_test::vmha_bin(), "run", "--", "/bin/busybox", "false"}, dir);
  ck_assert_int_eq(c.exit_code(), 1);
  c = vmha_test::run_capture({vmha_test::vmha_bin(), "run", "--", "/bin/busybox", "kill", "-SEGV", "0"}, dir);
  ck_assert_msg(c.term_signal() == SIGSEGV, "status %d: %s", c.status, c.err.c_str());
  // A shell runs a command in a child process; one outside the policy (a
  // copy of busybox outside the working directory and the system paths) is
  // refused with EACCES, as the policy refuses its open, and the shell goes on.
  c = vmha_test::run_capture(
      {vmha_test::vmha_bin(), "run", "--", "/bin/busybox", "sh", "-c", "/usr/bin/busybox true && echo after"}, dir);
  ck_assert_msg(c.exit_code() == 0 && c.out == "after\n", "exit %d, out '%s': %s", c.exit_code(), c.out.c_str(),
                c.err.c_str());
  const std::string outside = vmha_test::outside_tmp_dir() + "/busybox";
  std::filesystem::copy_file("/bin/busybox", outside);
  ck_assert_int_eq(chmod(outside.c_str(), 0755), 0);
  c = vmha_test::run_capture(
      {vmha_test::vmha_bin(), "run", "--", "/bin/busybox", "sh", "-c", outside + " true; echo after $?"}, dir);
  ck_assert_msg(contains(c.err, "Permission denied") && c.out == "after 126\n", "out '%s': %s", c.out.c_str(),
                c.err.c_str());
  // A FIFO is no program: EACCES, as natively (opening it to read waited for a writer for ever).
  ck_assert_int_eq(mkfifo((dir + "/fifo").c_str(), 0755), 0);
  c = vmha_test::run_capture({vmha_test::vmha_bin(), "run", "--", "/bin/busybox", "sh", "-c", "./fifo; echo after $?"},
                             dir);
  ck_assert_msg(c.out == "after 126\n", "out '%s': %s", c.out.c_str(), c.err.c_str());
}
END_TEST

struct stat stat_of(const std::string& path) {
  struct stat st {};
  ck_assert_msg(stat(path.c_str(), &st) == 0, "stat %s", path.c_str());
  return st;
}

// The guest changes no metadata behind fds it did not open itself
// (tests/vmha/fd_meta_probe.c): `vmha run -- prog < ../in > ../out` used to
// let it fchmod ../in to -rwsrwsrwx, ftruncate(1, 0) ../out and fchmod the
// host's /dev/null; fcntl(0, F_SETFL, O_NONBLOCK) set the flag on the open
// file description the calling shell shares.
START_TEST(metadata_of_files_the_guest_did_not_open_is_unchanged) {
  std::string outer = vmha_test::outside_tmp_dir();
  std::string dir = outer + "/job", in = outer + "/in", out = outer + "/out", err = outer + "/err";
  ck_assert_int_eq(mkdir(dir.c_str(), 0755), 0);
  for (const std::string& path : {in, out}) {
    FILE* f = std::fopen(path.c_str(), "w");
    std::fputs("keep me\n", f);
    std::fclose(f);
    ck_assert_int_eq(chmod(path.c_str(), 0644), 0);
    timespec old[2] = {{1000000000, 0}, {1000000000, 0}};
    ck_assert_int_eq(utimensat(AT_FDCWD, path.c_str(), old, 0), 0);
  }
  int in_fd = open(in.c_str(), O_RDONLY);  // shared with the child: its flags must stay
  ck_assert_int_ge(in_fd, 0);
  int in_flags = fcntl(in_fd, F_GETFL);
  std::string probe = vmha_test::builddir() + "/tests/vmha/fd_meta_probe", vmha = vmha_test::vmha_bin();
  pid_t pid = fork();
  if (pid == 0) {
    int o = open(out.c_str(), O_WRONLY | O_APPEND), e = open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (o < 0 || e < 0 || chdir(dir.c_str()) != 0) _exit(126);
    dup2(in_fd, 0);
    dup2(o, 1);
    dup2(e, 2);
    execl(vmha.c_str(), vmha.c_str(), "run", "--", probe.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  int status = 0;
  ck_assert_int_eq(waitpid(pid, &status, 0), pid);
  std::string report = vmha_test::slurp(err);
  ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "probe status %d: %s", status, report.c_str());
  for (const char* line :
       {"ftruncate 1: EINVAL\n", "ftruncate 0: EINVAL\n", "fchmod 0: EPERM\n", "fchmod 1: EPERM\n",
        "futimens 0: EPERM\n", "futimens 1: EPERM\n", "ftruncate dup of 1: EINVAL\n", "fchmod /dev/null: EPERM\n",
        "futimens /dev/null: EPERM\n", "ftruncate /dev/null: EINVAL\n", "setfl 0: ok\n", "getfl 0 has O_NONBLOCK: ok\n",
        "read 0: ok\n", "ftruncate own: ok\n", "fchmod own: ok\n", "futimens own: ok\n"})
    ck_assert_msg(contains(report, line), "expected \"%.*s\" in:\n%s", static_cast<int>(std::strlen(line) - 1), line,
                  report.c_str());
  struct stat st = stat_of(in);
  ck_assert_msg((st.st_mode & 07777) == 0644 && st.st_size == 8 && st.st_mtime == 1000000000,
                "stdin's file changed: mode %o size %lld mtime %lld", st.st_mode & 07777,
                static_cast<long long>(st.st_size), static_cast<long long>(st.st_mtime));
  st = stat_of(out);
  ck_assert_msg((st.st_mode & 07777) == 0644, "stdout's file mode changed to %o", st.st_mode & 07777);
  ck_assert_msg(vmha_test::slurp(out) == "keep me\nafter\n", "stdout's file: \"%s\"", vmha_test::slurp(out).c_str());
  ck_assert_int_eq(fcntl(in_fd, F_GETFL), in_flags);
  close(in_fd);
  st = stat_of(dir + "/own.txt");
  ck_assert_msg((st.st_mode & 07777) == 0640 && st.st_size == 4 && st.st_mtime == 1,
                "the guest's own file: mode %o size %lld mtime %lld", st.st_mode & 07777,
                static_cast<long long>(st.st_size), static_cast<long long>(st.st_mtime));
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
  tcase_add_test(tc, read_only_paths_are_read_never_written);
  tcase_add_test(tc, unsupported_syscall_is_enosys_logged_once);
  tcase_add_test(tc, malformed_programs_are_refused);
  tcase_add_test(tc, exit_status_and_signals_are_the_programs);
  tcase_add_test(tc, metadata_of_files_the_guest_did_not_open_is_unchanged);
  suite_add_tcase(s, tc);
  return test_support::run_suite(s);
}
