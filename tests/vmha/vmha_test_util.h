// Helpers for the vmha Check suites: is KVM here (and may a test skip),
// where the build put vmha and the workloads, and running a command with its
// output captured.
#pragma once
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "tests/unit/skip.h"

namespace vmha_test {

// KVM for a vmha test. A host without /dev/kvm skips the vmha tests; on a
// host with /dev/kvm a vmha test that skips is a failure, so a CI machine
// whose KVM broke (permissions, a module gone) does not pass by skipping.
enum class Kvm { kUsable, kAbsent, kBroken };
inline Kvm kvm_here(std::string* why) {
  if (access("/dev/kvm", F_OK) != 0) {
    *why = "no /dev/kvm on this host; vmha needs KVM";
    return Kvm::kAbsent;
  }
  if (test_support::pretend_missing("kvm")) {
    *why = "DUET_TEST_WITHOUT names kvm, but /dev/kvm is here: a vmha test does not skip on a host with KVM";
    return Kvm::kBroken;
  }
  int fd = open("/dev/kvm", O_RDWR | O_CLOEXEC);
  if (fd < 0) {
    *why = std::string("/dev/kvm is here but cannot be opened (") + std::strerror(errno) +
           "): run as root or in group kvm; a vmha test does not skip on a host with KVM";
    return Kvm::kBroken;
  }
  close(fd);
  return Kvm::kUsable;
}

// For a suite's main(): returns with KVM usable, exits 77 (Automake SKIP)
// without /dev/kvm, 99 (Automake ERROR, a failure) when it is here but broken.
inline void require_kvm() {
  std::string why;
  switch (kvm_here(&why)) {
    case Kvm::kUsable: return;
    case Kvm::kAbsent: std::printf("SKIP: %s\n", why.c_str()); std::exit(77);
    case Kvm::kBroken: std::printf("FAIL: %s\n", why.c_str()); std::exit(99);
  }
}

// For one test of a suite that also runs without KVM: true when usable,
// false without /dev/kvm (SKIP_UNLESS skips the test); when /dev/kvm is here
// but broken the test exits 99, which Check counts as an error.
inline bool kvm_for_test() {
  std::string why;
  Kvm k = kvm_here(&why);
  if (k == Kvm::kBroken) {
    std::fprintf(stderr, "FAIL: %s\n", why.c_str());
    std::exit(99);
  }
  return k == Kvm::kUsable;
}

// Exits 77 when the busybox-static applets the suite runs are missing.
inline void require_busybox() {
  if (!test_support::have_program("/bin/busybox")) {
    std::printf("SKIP: /bin/busybox is missing (Debian: apt-get install busybox-static)\n");
    std::exit(77);
  }
}

inline std::string builddir() {
  const char* b = std::getenv("top_builddir");
  return b ? b : ".";
}
inline std::string srcdir() {
  const char* s = std::getenv("top_srcdir");
  return s ? s : ".";
}
inline std::string vmha_bin() { return builddir() + "/vmha/vmha"; }
inline std::string workload(const std::string& name) { return builddir() + "/vmha/workloads/" + name; }

inline std::string slurp(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

struct Captured {
  std::string out, err;
  int status = -1;  // raw wait status
  int exit_code() const { return WIFEXITED(status) ? WEXITSTATUS(status) : -1; }
  int term_signal() const { return WIFSIGNALED(status) ? WTERMSIG(status) : 0; }
};

// Runs argv in dir with stdout/stderr captured to files in dir.
inline Captured run_capture(const std::vector<std::string>& argv, const std::string& dir) {
  Captured c;
  std::string out = dir + "/.cap.out", err = dir + "/.cap.err";
  pid_t pid = fork();
  if (pid == 0) {
    if (chdir(dir.c_str()) != 0) _exit(126);
    int o = open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644),
        e = open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(o, 1);
    dup2(e, 2);
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execv(args[0], args.data());
    _exit(127);
  }
  waitpid(pid, &c.status, 0);
  c.out = slurp(out);
  c.err = slurp(err);
  return c;
}

// Directories make_temp_dir made in this process, removed when it exits
// (a test's forked child, Check's default, exits after each test). Only the
// process that made one removes it: a helper the test forks and that exits
// early must not take the test's files away.
struct TempDirs {
  pid_t owner = 0;
  std::vector<std::string> dirs;
};
inline TempDirs& temp_dirs() {
  static TempDirs t;
  return t;
}
inline void remove_temp_dirs() {
  TempDirs& t = temp_dirs();
  if (t.owner != getpid()) return;
  std::error_code ec;
  for (const std::string& d : t.dirs) std::filesystem::remove_all(d, ec);
  t.dirs.clear();
}

inline std::string tmp_parent() {
  const char* t = std::getenv("TMPDIR");
  return t ? t : "/tmp";
}

// The suite's own process: its pid names every directory its tests make,
// and it removes them all when it exits, also those of a test that failed or
// timed out (Check ends such a child with _exit, which skips remove_temp_dirs):
// failed runs left them in /tmp run after run.
struct SuiteDirs {
  pid_t suite = getpid();
  std::string prefix() const { return "vmha-test-" + std::to_string(suite) + "-"; }
  ~SuiteDirs() {
    if (getpid() != suite || std::getenv("VMHA_TEST_KEEP")) return;
    std::error_code ec;
    for (const std::string& parent : {tmp_parent(), builddir() + "/tests"})
      for (auto it = std::filesystem::directory_iterator(parent, ec); !ec && it != std::filesystem::directory_iterator();
           it.increment(ec))
        if (it->path().filename().string().rfind(prefix(), 0) == 0) {
          std::error_code rm;
          std::filesystem::remove_all(it->path(), rm);
        }
  }
};
inline SuiteDirs suite_dirs;

// A fresh directory under $TMPDIR (or /tmp) for one test; removed with
// everything in it when the process that asked for it exits, and in any case
// when the suite ends (kept, for a look after a failure, when VMHA_TEST_KEEP
// is set).
// `parent` "": $TMPDIR or /tmp. A guest sees its own private /tmp, so a
// test whose files outside the working directory must be the host's (what
// confinement refuses) makes them in the build tree (outside_tmp_dir()).
inline std::string make_temp_dir(const std::string& parent = "") {
  std::string tmpl = (parent.empty() ? tmp_parent() : parent) + "/" + suite_dirs.prefix() + "XXXXXX";
  std::vector<char> buf(tmpl.begin(), tmpl.end());
  buf.push_back('\0');
  if (!mkdtemp(buf.data())) {
    std::perror("mkdtemp");
    std::exit(99);
  }
  char real[PATH_MAX];
  std::string dir = realpath(buf.data(), real) ? real : buf.data();
  if (!std::getenv("VMHA_TEST_KEEP")) {
    TempDirs& td = temp_dirs();
    if (td.owner != getpid()) {  // first one in this process (or a fork of the one that registered)
      td.owner = getpid();
      td.dirs.clear();
      std::atexit(remove_temp_dirs);
    }
    td.dirs.push_back(dir);
  }
  return dir;
}

// A fresh directory in the build tree, not under /tmp: the guest's /tmp is
// private, so only paths elsewhere test what the policy refuses.
inline std::string outside_tmp_dir() { return make_temp_dir(builddir() + "/tests"); }

}  // namespace vmha_test
