#include "vmha/vmm/exec_resolve.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace vmha {

namespace {

bool executable_file(const std::string& p) {
  struct stat st;
  return ::stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(p.c_str(), X_OK) == 0;
}

Status search_path(const std::string& name, const std::string& path_env, std::string* found) {
  std::size_t start = 0;
  while (start <= path_env.size()) {
    std::size_t colon = path_env.find(':', start);
    if (colon == std::string::npos) colon = path_env.size();
    std::string dir = path_env.substr(start, colon - start);
    std::string cand = (dir.empty() ? "." : dir) + "/" + name;
    if (executable_file(cand)) {
      *found = cand;
      return Status();
    }
    start = colon + 1;
  }
  return Status::error(name + ": command not found in PATH (" + path_env + ")");
}

// The first bytes of `path`: enough for the ELF magic or a `#!` line.
Status head_of(const std::string& path, std::string* head) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return Status::error(path + ": " + std::strerror(errno));
  struct stat st;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return Status::error(path + ": not a regular file");
  }
  char buf[kShebangMax];
  ssize_t n = ::read(fd, buf, sizeof buf);
  int err = errno;
  ::close(fd);
  if (n < 0) return Status::error(path + ": " + std::strerror(err));
  head->assign(buf, static_cast<std::size_t>(n));
  return Status();
}

std::string trim(const std::string& s) {
  const char* ws = " \t";
  std::size_t b = s.find_first_not_of(ws);
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(ws) - b + 1);
}

}  // namespace

Status resolve_exec(const std::vector<std::string>& argv, const std::string& path_env, ExecPlan* out) {
  if (argv.empty() || argv[0].empty()) return Status::error("no program given");
  std::string path = argv[0];
  if (path.find('/') == std::string::npos) {
    if (Status s = search_path(path, path_env.empty() ? kDefaultPath : path_env, &path); !s.ok()) return s;
  } else if (!executable_file(path)) {
    return Status::error(path + ": " +
                         (::access(path.c_str(), F_OK) == 0 ? "not an executable file" : std::strerror(ENOENT)));
  }
  std::vector<std::string> args = argv;
  for (int depth = 0;; ++depth) {
    std::string head;
    if (Status s = head_of(path, &head); !s.ok()) return s;
    if (head.rfind("#!", 0) != 0) break;
    if (depth == kMaxInterpreterDepth)
      return Status::error(argv[0] + ": more than " + std::to_string(kMaxInterpreterDepth) + " nested #! interpreters");
    std::size_t eol = head.find('\n');
    if (eol == std::string::npos && head.size() == kShebangMax)
      return Status::error(path + ": #! line longer than " + std::to_string(kShebangMax - 1) + " bytes");
    std::string line = trim(head.substr(2, eol == std::string::npos ? std::string::npos : eol - 2));
    if (!line.empty() && line.back() == '\r') line = trim(line.substr(0, line.size() - 1));
    if (line.empty()) return Status::error(path + ": #! names no interpreter");
    std::size_t sp = line.find_first_of(" \t");
    std::string interp = line.substr(0, sp);
    std::string opt = sp == std::string::npos ? "" : trim(line.substr(sp));
    std::vector<std::string> next = {interp};
    if (!opt.empty()) next.push_back(opt);
    next.push_back(path);
    next.insert(next.end(), args.begin() + 1, args.end());
    args = std::move(next);
    if (!executable_file(interp))
      return Status::error(path + ": interpreter " + interp + ": " +
                           (::access(interp.c_str(), F_OK) == 0 ? "not an executable file" : std::strerror(ENOENT)));
    path = interp;
  }
  out->path = path;
  out->argv = std::move(args);
  return Status();
}

}  // namespace vmha
