// Runs a piece of a test in a forked child with a deadline, for inputs that
// once blocked for ever (a FIFO) or ate the machine (/dev/zero): the suite
// itself must not hang. Shared by the suites that feed loaders such files.
#pragma once
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <string>

namespace test_support {

// What f() returned in a child killed after `seconds`; "HUNG" when the
// deadline killed it, "SIGNAL n" for any other signal. With extra_as_bytes,
// the child's address space is capped that far above what it maps now.
template <class F>
std::string in_child(F f, unsigned seconds = 10, unsigned long extra_as_bytes = 0) {
  int fds[2];
  if (pipe(fds) != 0) return "SETUP: pipe failed";
  pid_t pid = fork();
  if (pid < 0) return "SETUP: fork failed";
  if (pid == 0) {
    close(fds[0]);
    signal(SIGALRM, SIG_DFL);  // Check's own handler would kill the whole process group
    alarm(seconds);
    if (extra_as_bytes) {
      unsigned long pages = 0;
      if (FILE* s = std::fopen("/proc/self/statm", "r")) {
        if (std::fscanf(s, "%lu", &pages) != 1) pages = 0;
        std::fclose(s);
      }
      const rlim_t cap = static_cast<rlim_t>(pages) * static_cast<rlim_t>(sysconf(_SC_PAGESIZE)) + extra_as_bytes;
      struct rlimit lim = {cap, cap};
      setrlimit(RLIMIT_AS, &lim);
    }
    std::string out = f();
    ssize_t ignored = write(fds[1], out.data(), out.size());
    (void)ignored;
    _exit(0);
  }
  close(fds[1]);
  std::string got;
  char buf[4096];
  for (ssize_t n; (n = read(fds[0], buf, sizeof buf)) > 0;) got.append(buf, static_cast<std::size_t>(n));
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  if (WIFSIGNALED(status)) return WTERMSIG(status) == SIGALRM ? "HUNG" : "SIGNAL " + std::to_string(WTERMSIG(status));
  return got;
}

}  // namespace test_support
