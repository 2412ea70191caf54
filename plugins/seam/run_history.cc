#include "plugins/seam/run_history.h"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <vector>

namespace duet::plugin {
namespace {

bool plain_token(std::string_view s) {
  if (s.empty() || s.size() > 256) return false;
  for (char c : s)
    if (static_cast<unsigned char>(c) <= ' ' || static_cast<unsigned char>(c) >= 0x7f) return false;
  return true;
}

}  // namespace

RunKey run_key(std::uint32_t user, std::uint32_t gpus, std::string_view name) {
  std::uint64_t h = 14695981039346656037ull;
  for (char c : name) {
    h ^= static_cast<unsigned char>(c);
    h *= 1099511628211ull;
  }
  return RunKey{user, gpus, h};
}

std::optional<double> RunHistory::expected_work(const RunKey& key, std::string_view node,
                                                const std::function<double(std::string_view)>& speed) const {
  auto it = keys_.find(key);
  if (it == keys_.end()) return std::nullopt;
  std::vector<double> work;
  for (const Run& r : it->second.runs)
    if (r.node != node) {
      const double w = r.run_s * speed(r.node);
      if (std::isfinite(w) && w > 0) work.push_back(w);
    }
  if (work.size() < kMinOthers) return std::nullopt;
  auto mid = work.begin() + static_cast<std::ptrdiff_t>(work.size() / 2);
  std::nth_element(work.begin(), mid, work.end());
  return *mid;
}

void RunHistory::append(const RunKey& key, Run run) {
  auto it = keys_.find(key);
  if (it == keys_.end()) {
    if (keys_.size() >= kMaxKeys) {
      auto oldest = std::min_element(keys_.begin(), keys_.end(),
                                     [](const auto& a, const auto& b) { return a.second.last < b.second.last; });
      keys_.erase(oldest);
    }
    it = keys_.emplace(key, Runs{}).first;
  }
  Runs& r = it->second;
  r.last = std::max(r.last, run.time);
  r.runs.push_back(std::move(run));
  while (r.runs.size() > kRunsPerKey) r.runs.pop_front();
}

void RunHistory::record(const RunKey& key, const std::string& node, double run_s, std::int64_t time) {
  if (!plain_token(node) || !std::isfinite(run_s) || !(run_s > 0)) return;
  append(key, Run{time, run_s, node});
}

std::size_t RunHistory::runs() const {
  std::size_t n = 0;
  for (const auto& [k, r] : keys_) n += r.runs.size();
  return n;
}

void RunHistory::save(std::ostream& out) const {
  const auto old = out.precision(17);
  for (const auto& [k, r] : keys_)
    for (const Run& run : r.runs)
      out << "run " << k.user << ' ' << k.gpus << ' ' << k.name_hash << ' ' << run.time << ' ' << run.run_s << ' '
          << run.node << '\n';
  out.precision(old);
}

bool RunHistory::restore_line(std::string_view line) {
  std::istringstream in{std::string(line)};
  std::string kind, extra;
  RunKey k;
  Run run{};
  if (!(in >> kind) || kind != "run") return false;
  if (!(in >> k.user >> k.gpus >> k.name_hash >> run.time >> run.run_s >> run.node) || (in >> extra) ||
      !plain_token(run.node) || !std::isfinite(run.run_s) || !(run.run_s > 0))
    return false;
  append(k, std::move(run));
  return true;
}

}  // namespace duet::plugin
