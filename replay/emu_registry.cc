#include "replay/emu_registry.h"

#include <signal.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <system_error>

namespace duet::replay {

namespace fs = std::filesystem;

bool process_alive(long pid) {
  if (pid <= 0) return false;
  if (kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH) return false;
  std::ifstream st("/proc/" + std::to_string(pid) + "/stat");
  std::string all;
  if (!std::getline(st, all)) return kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM;
  size_t p = all.rfind(')');
  if (p == std::string::npos || p + 2 >= all.size()) return true;
  char state = all[p + 2];
  return state != 'Z' && state != 'X';
}

void EmuRegistry::enter(const std::vector<std::string>& nodes, const std::string& job_id, long pid,
                        const std::string& job_type) {
  for (const auto& n : nodes) {
    fs::path d = fs::path(dir_) / n;
    std::error_code ec;
    fs::create_directories(d, ec);
    if (ec) throw std::runtime_error("cannot create " + d.string() + ": " + ec.message());
    fs::path f = d / (job_id + "." + std::to_string(pid));
    fs::path tmp = d / ("." + job_id + "." + std::to_string(pid) + ".tmp");
    {
      std::ofstream o(tmp);
      o << job_type << "\n";
      if (!o) throw std::runtime_error("cannot write " + tmp.string());
    }
    fs::rename(tmp, f, ec);  // readers never see a half-written entry
    if (ec) throw std::runtime_error("cannot rename " + tmp.string() + ": " + ec.message());
    written_.push_back(f.string());
  }
}

void EmuRegistry::leave() {
  for (const auto& f : written_) {
    std::error_code ec;
    fs::remove(f, ec);
  }
  written_.clear();
}

std::vector<EmuEntry> EmuRegistry::on_node(const std::string& node, long self_pid) const {
  std::vector<EmuEntry> v;
  std::error_code ec;
  fs::directory_iterator it(fs::path(dir_) / node, ec);
  if (ec) return v;  // nobody registered there yet
  for (const auto& e : it) {
    const std::string name = e.path().filename().string();
    if (name.empty() || name[0] == '.') continue;
    size_t dot = name.rfind('.');
    if (dot == std::string::npos) continue;
    long pid = std::strtol(name.c_str() + dot + 1, nullptr, 10);
    if (pid == self_pid) continue;
    if (!process_alive(pid)) {
      std::error_code rm;
      fs::remove(e.path(), rm);  // stale: its job died without cleaning up
      continue;
    }
    std::ifstream f(e.path());
    EmuEntry x;
    x.node = node;
    x.job_id = name.substr(0, dot);
    x.pid = pid;
    if (!std::getline(f, x.job_type)) continue;  // removed between listing and reading
    v.push_back(std::move(x));
  }
  return v;
}

}  // namespace duet::replay
