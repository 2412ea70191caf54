#include "replay/emu_checkpoint.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include <fmt/format.h>

namespace duet::replay {

std::string checkpoint_path(const std::string& dir, const std::string& job_id) {
  if (job_id.empty() || job_id.find('/') != std::string::npos || job_id == "." || job_id == "..")
    throw std::runtime_error("job id '" + job_id + "' cannot name a checkpoint file");
  return (std::filesystem::path(dir) / job_id).string();
}

std::optional<double> read_checkpoint(const std::string& path) {
  std::ifstream in(path);
  if (!in) {
    if (errno == ENOENT) return std::nullopt;
    throw std::runtime_error(fmt::format("{}: cannot read: {}", path, std::strerror(errno)));
  }
  std::string text((std::istreambuf_iterator<char>(in)), {});
  std::istringstream s(text);
  std::string key;
  double left = -1;
  std::string rest;
  if (!(s >> key >> left) || key != "work_left" || (s >> rest) || !std::isfinite(left) || left < 0)
    throw std::runtime_error(
        fmt::format("{}:1: expected 'work_left SECONDS' (a number >= 0), got '{}'", path, text.substr(0, std::min(text.find('\n'), size_t{80}))));
  return left;
}

void write_checkpoint(const std::string& path, double work_left) {
  const std::filesystem::path p(path);
  std::error_code ec;
  std::filesystem::create_directories(p.parent_path(), ec);
  // write, then rename: a run killed mid-write leaves the old checkpoint
  const std::string tmp = path + fmt::format(".tmp{}", static_cast<long>(getpid()));
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << fmt::format("work_left {:.6f}\n", std::max(0.0, work_left));
    out.flush();
    if (!out) throw std::runtime_error(fmt::format("{}: cannot write: {}", tmp, std::strerror(errno)));
  }
  std::filesystem::rename(tmp, p, ec);
  if (ec) {
    std::filesystem::remove(tmp);
    throw std::runtime_error(fmt::format("{}: cannot replace: {}", path, ec.message()));
  }
}

void remove_checkpoint(const std::string& path) {
  std::error_code ec;
  std::filesystem::remove(path, ec);
}

}  // namespace duet::replay
