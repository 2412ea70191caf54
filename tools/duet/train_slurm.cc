// duet train's workers as the tasks of a Slurm job step (train_workers.h):
// their places from the step's environment, and the store's address.
#include <netdb.h>
#include <sys/socket.h>

#include <cctype>
#include <cstdio>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>

#include "tools/duet/train_workers.h"

namespace duet::cli {
namespace {

std::uint64_t env_number(const EnvFn& env, const char* name) {
  const char* v = env(name);
  if (!v || !*v) throw std::runtime_error(std::string(name) + " is not set in this Slurm step");
  std::uint64_t n = 0;
  for (const char* c = v; *c; ++c) {
    if (!std::isdigit(static_cast<unsigned char>(*c)) || n > (UINT64_MAX - 9) / 10)
      throw std::runtime_error(std::string(name) + "=" + v + ": expected a number");
    n = n * 10 + static_cast<std::uint64_t>(*c - '0');
  }
  return n;
}

bool resolves(const std::string& host) {
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  const int rc = getaddrinfo(host.c_str(), nullptr, &hints, &res);
  if (res) freeaddrinfo(res);
  return rc == 0;
}

// Node names of Slurm's hostlist syntax; nothing a shell would read.
bool plain_name(const std::string& s) {
  if (s.empty()) return false;
  for (char c : s)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_' && c != '.') return false;
  return true;
}

}  // namespace

std::string first_host(const std::string& hostlist) {
  std::string out;
  for (size_t i = 0; i < hostlist.size(); ++i) {
    const char c = hostlist[i];
    if (c == ',') break;
    if (c != '[') {
      out += c;
      continue;
    }
    // a range group: its first number (zero padding kept), then past ']'
    const size_t close = hostlist.find(']', i);
    if (close == std::string::npos) throw std::runtime_error("host list '" + hostlist + "': '[' without ']'");
    const std::string group = hostlist.substr(i + 1, close - i - 1);
    const size_t end = group.find_first_of(",-");
    const std::string first = group.substr(0, end);
    if (first.empty()) throw std::runtime_error("host list '" + hostlist + "': empty range");
    out += first;
    i = close;
  }
  if (out.empty()) throw std::runtime_error("host list '" + hostlist + "': no host");
  return out;
}

int step_store_port(std::uint64_t job, std::uint64_t step) {
  return 29500 + static_cast<int>((job * 16 + step) % 2000);
}

std::optional<learn::WorkerPlace> slurm_step_place(const EnvFn& env) {
  // only srun's tasks have a step's task count; SLURM_NTASKS is also the
  // allocation's, set in batch scripts
  const char* tasks = env("SLURM_STEP_NUM_TASKS");
  if (!tasks || !*tasks || !env("SLURM_PROCID")) return std::nullopt;
  const std::uint64_t n = env_number(env, "SLURM_STEP_NUM_TASKS");
  if (n <= 1) return std::nullopt;
  learn::WorkerPlace p;
  p.size = static_cast<int>(n);
  p.rank = static_cast<int>(env_number(env, "SLURM_PROCID"));
  const char* nodes = env("SLURM_STEP_NODELIST");
  if (!nodes || !*nodes) throw std::runtime_error("SLURM_STEP_NODELIST is not set in this Slurm step");
  p.store_host = first_host(nodes);
  const std::uint64_t job = env_number(env, "SLURM_JOB_ID"), step = env_number(env, "SLURM_STEP_ID");
  p.store_port = step_store_port(job, step);
  p.scope = "slurm job " + std::to_string(job) + " step " + std::to_string(step);
  return p;
}

std::string node_address(const std::string& node) {
  if (resolves(node)) return node;
  if (!plain_name(node)) throw std::runtime_error("node '" + node + "' does not resolve as a host name");
  const std::string cmd = "timeout 20 scontrol show node -o '" + node + "' 2>/dev/null";
  std::unique_ptr<FILE, int (*)(FILE*)> f(popen(cmd.c_str(), "r"), pclose);
  std::string out;
  if (f) {
    char buf[4096];
    size_t got;
    while ((got = fread(buf, 1, sizeof buf, f.get())) > 0) out.append(buf, got);
  }
  std::istringstream words(out);
  for (std::string w; words >> w;)
    if (w.rfind("NodeAddr=", 0) == 0 && w.size() > 9) return w.substr(9);
  throw std::runtime_error("node '" + node +
                           "' does not resolve as a host name and `scontrol show node` gives no NodeAddr for it");
}

}  // namespace duet::cli
