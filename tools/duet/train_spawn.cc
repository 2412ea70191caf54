// duet train --workers N on one host (train_workers.h): worker 0 starts the
// others as copies of itself and watches them; they meet in a FileStore in
// a directory only this user can enter.
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>

#include "tools/duet/train_workers.h"

extern char** environ;

namespace duet::cli {
namespace {

constexpr const char* kWorkerVar = "DUET_TRAIN_WORKER";

// This process's arguments, as it was started (argv[0] included).
std::vector<std::string> own_arguments() {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  const std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::string> args;
  for (size_t i = 0; i < all.size();) {
    const size_t end = all.find('\0', i);
    args.push_back(all.substr(i, end == std::string::npos ? std::string::npos : end - i));
    if (end == std::string::npos) break;
    i = end + 1;
  }
  if (args.empty()) throw std::runtime_error("--workers: cannot read this command's arguments (/proc/self/cmdline)");
  return args;
}

std::string describe(int status) {
  if (WIFEXITED(status)) return "exited with status " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) {
    const int s = WTERMSIG(status);
    const char* name = sigabbrev_np(s);
    return "was killed by signal " + std::to_string(s) + (name ? std::string(" (SIG") + name + ")" : "");
  }
  return "ended with wait status " + std::to_string(status);
}

bool failed(int status) { return !(WIFEXITED(status) && WEXITSTATUS(status) == 0); }

std::string worker_name(size_t i, size_t n, pid_t pid) {
  return "worker " + std::to_string(i + 1) + " of " + std::to_string(n + 1) + " (pid " + std::to_string(pid) + ")";
}

}  // namespace

std::optional<learn::WorkerPlace> spawned_place(const EnvFn& env) {
  const char* v = env(kWorkerVar);
  if (!v || !*v) return std::nullopt;
  learn::WorkerPlace p;
  int at = 0;
  if (std::sscanf(v, "%d/%d@%n", &p.rank, &p.size, &at) != 2 || at == 0 || v[at] != '/' || v[at + 1] == '\0')
    throw std::runtime_error(std::string(kWorkerVar) + "=" + v + ": expected RANK/SIZE@PATH (an absolute path)");
  p.store_path = v + at;
  return p;
}

PrivateStoreDir::PrivateStoreDir() {
  const char* tmp = std::getenv("TMPDIR");
  std::string templ = std::string(tmp && *tmp == '/' ? tmp : "/tmp") + "/duet-train.XXXXXX";
  if (!mkdtemp(templ.data()))
    throw std::runtime_error("--workers: cannot make a private directory " + templ + ": " + std::strerror(errno));
  dir_ = templ;
}

PrivateStoreDir::~PrivateStoreDir() {
  // the FileStore removes its file when its last worker closes it; not so
  // after a failure
  ::unlink(store_path().c_str());
  ::rmdir(dir_.c_str());
}

LocalWorkers::LocalWorkers(int size, const std::string& store_path) : store_path_(store_path) {
  const std::vector<std::string> args = own_arguments();
  // everything the children need is built before fork: after it, only
  // async-signal-safe calls (this process already runs threads)
  std::vector<char*> argv;
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  std::vector<std::string> env;
  for (char** e = environ; *e; ++e)
    if (std::strncmp(*e, kWorkerVar, std::strlen(kWorkerVar)) != 0 || (*e)[std::strlen(kWorkerVar)] != '=')
      env.emplace_back(*e);
  const size_t slot = env.size();
  env.emplace_back();
  const pid_t parent = getpid();
  for (int rank = 1; rank < size; ++rank) {
    env[slot] = std::string(kWorkerVar) + "=" + std::to_string(rank) + "/" + std::to_string(size) + "@" + store_path;
    std::vector<char*> envp;
    for (auto& e : env) envp.push_back(e.data());
    envp.push_back(nullptr);
    const pid_t pid = fork();
    if (pid < 0) throw std::runtime_error(std::string("--workers: fork: ") + std::strerror(errno));
    if (pid == 0) {
      prctl(PR_SET_PDEATHSIG, SIGTERM);
      if (getppid() != parent) _exit(1);
      const int null = open("/dev/null", O_RDWR);
      if (null >= 0) dup2(null, 0), dup2(null, 1);
      execve("/proc/self/exe", argv.data(), envp.data());
      _exit(127);
    }
    pids_.push_back(pid);
    statuses_.push_back(-1);
  }
  watcher_ = std::thread([this] { watch(); });
}

// Polls rather than blocks: a blocking wait on one worker would not see
// another fail, and waiting on any child would take gnuplot's from system().
// Ends when every worker has ended well (or at stop_).
void LocalWorkers::watch() {
  size_t left = pids_.size();
  while (!stop_ && left > 0) {
    for (size_t i = 0; i < pids_.size(); ++i) {
      if (statuses_[i] != -1) continue;
      int st = 0;
      if (waitpid(pids_[i], &st, WNOHANG) != pids_[i]) continue;
      statuses_[i] = st;
      --left;
      if (!failed(st)) continue;
      std::fprintf(stderr, "duet: %s %s; the training run stops\n", worker_name(i, pids_.size(), pids_[i]).c_str(),
                   describe(st).c_str());
      for (size_t j = 0; j < pids_.size(); ++j)
        if (statuses_[j] == -1) kill(pids_[j], SIGTERM);
      // _exit skips PrivateStoreDir's destructor: the store's file and directory go here
      ::unlink(store_path_.c_str());
      ::rmdir(store_path_.substr(0, store_path_.rfind('/')).c_str());
      _exit(1);
    }
    if (left > 0) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

void LocalWorkers::finish() {
  // the workers end after their last update, as worker 0 does; a failure
  // ends this process from the watcher
  if (watcher_.joinable()) watcher_.join();
}

LocalWorkers::~LocalWorkers() {
  stop_ = true;
  if (watcher_.joinable()) watcher_.join();
  for (size_t i = 0; i < pids_.size(); ++i) {
    if (statuses_[i] != -1) continue;
    int st = 0;
    if (waitpid(pids_[i], &st, WNOHANG) == pids_[i]) {
      statuses_[i] = st;
      if (failed(st))
        std::fprintf(stderr, "duet: %s %s\n", worker_name(i, pids_.size(), pids_[i]).c_str(),
                     describe(st).c_str());
      continue;
    }
    kill(pids_[i], SIGTERM);
    waitpid(pids_[i], &st, 0);
  }
}

}  // namespace duet::cli
