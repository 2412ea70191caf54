#include "plugins/spank/task/batch_script.h"

#include <fcntl.h>
#include <ftw.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace vmha_task {

namespace {

bool write_all(int fd, const char* p, size_t n) {
  while (n > 0) {
    ssize_t w = write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    p += w;
    n -= static_cast<size_t>(w);
  }
  return true;
}

int remove_entry(const char* path, const struct stat*, int, struct FTW*) {
  std::remove(path);  // a file, a symlink itself or an emptied directory
  return 0;
}

}  // namespace

bool copy_batch_script(const std::string& from, const std::string& to, std::string* error) {
  auto failed = [&](const std::string& what) {
    *error = "cannot copy the batch script " + from + " to " + to + ": " + what + ": " + std::strerror(errno);
    return false;
  };
  int in = open(from.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (in < 0) return failed("open " + from);
  const std::string tmp = to + ".tmp";
  unlink(tmp.c_str());
  int out = open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0700);
  if (out < 0) {
    close(in);
    return failed("create " + tmp);
  }
  std::string what;
  char buf[65536];
  for (;;) {
    ssize_t n = read(in, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) what = "read";
    if (n > 0 && !write_all(out, buf, static_cast<size_t>(n))) what = "write";
    if (n <= 0 || !what.empty()) break;
  }
  if (what.empty() && fchmod(out, 0500) != 0) what = "chmod";
  if (close(out) != 0 && what.empty()) what = "close";
  if (what.empty() && std::rename(tmp.c_str(), to.c_str()) != 0) what = "rename";
  const int saved = errno;
  close(in);
  if (what.empty()) return true;
  unlink(tmp.c_str());
  errno = saved;
  return failed(what);
}

std::string batch_tmpdir(const std::string& cwd, const char* tmpdir, const std::string& job) {
  if (tmpdir && *tmpdir == '/') {
    std::string d = tmpdir;
    while (d.size() > 1 && d.back() == '/') d.pop_back();
    if (d == cwd || d.compare(0, cwd.size() + 1, cwd + "/") == 0) return "";
  }
  return (cwd == "/" ? "" : cwd) + "/.vmha-tmp." + job;
}

bool prepare_batch_task(TaskEnv* t, std::string* error) {
  if (!copy_batch_script(t->program, t->file("script"), error)) return false;
  t->script = t->file("script");
  std::string tmp = batch_tmpdir(t->cwd, std::getenv("TMPDIR"), t->job);
  if (tmp.empty()) return true;
  // A requeued job's, left by a node that died: its own name, so reused.
  if (mkdir(tmp.c_str(), 0700) != 0 && errno != EEXIST) {
    *error = "cannot create the batch script's TMPDIR " + tmp + ": " + std::strerror(errno);
    return false;
  }
  t->tmpdir = tmp;
  return true;
}

void remove_batch_tmpdir(const TaskEnv& t) {
  if (!t.tmpdir.empty()) nftw(t.tmpdir.c_str(), remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

}  // namespace vmha_task
