#include "plugins/spank/task/spawn.h"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

extern char** environ;

namespace vmha_task {

namespace {

std::vector<char*> pointers(const std::vector<std::string>& v) {
  std::vector<char*> p;
  for (const auto& s : v) p.push_back(const_cast<char*>(s.c_str()));
  p.push_back(nullptr);
  return p;
}

void redirect(const std::string& path, int fd) {
  if (path.empty()) return;
  int f = open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
  if (f < 0 || dup2(f, fd) < 0) _exit(126);
  close(f);
}

}  // namespace

pid_t spawn(const std::vector<std::string>& argv, const std::vector<std::string>& env, const SpawnFiles& files,
            std::string* error) {
  auto args = pointers(argv), envp = pointers(env);
  pid_t pid = fork();
  if (pid < 0) {
    *error = std::string("fork: ") + std::strerror(errno);
    return -1;
  }
  if (pid == 0) {
    if (files.null_stdin) {
      int n = open("/dev/null", O_RDONLY);
      if (n >= 0) dup2(n, 0);
    }
    redirect(files.out, 1);
    redirect(files.err, 2);
    execve(args[0], args.data(), envp.data());
    _exit(127);
  }
  return pid;
}

std::string capture(const std::vector<std::string>& argv) {
  int p[2];
  if (pipe2(p, O_CLOEXEC) != 0) return "";
  auto args = pointers(argv);
  pid_t pid = fork();
  if (pid < 0) return "";
  if (pid == 0) {
    dup2(p[1], 1);
    int n = open("/dev/null", O_WRONLY);
    if (n >= 0) dup2(n, 2);
    execvp(args[0], args.data());
    _exit(127);
  }
  close(p[1]);
  std::string out;
  char buf[4096];
  ssize_t r;
  while ((r = read(p[0], buf, sizeof buf)) > 0 || (r < 0 && errno == EINTR))
    if (r > 0) out.append(buf, static_cast<size_t>(r));
  close(p[0]);
  int st;
  while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {}
  return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? out : "";
}

}  // namespace vmha_task
