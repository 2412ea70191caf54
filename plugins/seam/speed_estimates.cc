#include "plugins/seam/speed_estimates.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>

namespace duet::plugin {
namespace {

// Sums below this are rounding left over from subtracting expired moves.
constexpr double kDust = 1e-12;

bool plain_token(std::string_view s) {
  if (s.empty() || s.size() > 256) return false;
  for (char c : s)
    if (static_cast<unsigned char>(c) <= ' ' || static_cast<unsigned char>(c) >= 0x7f) return false;
  return true;
}

template <class Map, class Key>
double spent(const Map& m, const Key& k) {
  auto it = m.find(k);
  return it == m.end() ? 0.0 : it->second;
}

template <class Map, class Key>
void add_to(Map& m, const Key& k, double x) {
  double& v = m[k];
  v += x;
  if (v < kDust) m.erase(k);
}

}  // namespace

const char* to_string(SpeedVerdict v) {
  switch (v) {
    case SpeedVerdict::kMoved: return "moved";
    case SpeedVerdict::kNoChange: return "no change";
    case SpeedVerdict::kUserNodeLimit: return "user's limit for the node reached";
    case SpeedVerdict::kUserLimit: return "user's limit reached";
    case SpeedVerdict::kNodeLimit: return "node's limit reached";
    case SpeedVerdict::kInvalid: return "invalid";
  }
  return "?";
}

void SpeedEstimates::charge(const Move& m, double sign) {
  add_to(spent_user_node_, std::make_pair(m.user, m.node), sign * m.amount);
  add_to(spent_user_, m.user, sign * m.amount);
  add_to(spent_node_, m.node, sign * m.amount);
}

void SpeedEstimates::expire(std::int64_t now) {
  // A sample at `now` counts the moves of (now - window_s, now]: so any
  // window_s-long stretch of time holds at most one budget's worth. A clock
  // that went back keeps moves longer (the safe side).
  while (!moves_.empty() && moves_.front().time <= now - lim_.window_s) {
    charge(moves_.front(), -1);
    moves_.pop_front();
  }
}

double SpeedEstimates::budget_left(std::uint32_t user, const std::string& node, std::int64_t now) {
  expire(now);
  const double left = std::min({lim_.user_node - spent(spent_user_node_, std::make_pair(user, node)),
                                lim_.user_total - spent(spent_user_, user), lim_.node - spent(spent_node_, node)});
  return left < kDust ? 0.0 : left;
}

SpeedVerdict SpeedEstimates::add(const SpeedSample& s, double* moved) {
  if (moved) *moved = 0;
  if (!plain_token(s.node) || !std::isfinite(s.value)) return SpeedVerdict::kInvalid;
  expire(s.time);
  const double e = estimate(s.node);
  const double want = std::clamp(std::clamp(s.value, -lim_.max_abs, lim_.max_abs) - e, -lim_.max_step, lim_.max_step);
  if (std::abs(want) < kDust) return SpeedVerdict::kNoChange;
  // the tightest budget, named in the order a user meets them
  if (lim_.user_node - spent(spent_user_node_, std::make_pair(s.user, s.node)) < kDust)
    return SpeedVerdict::kUserNodeLimit;
  if (lim_.user_total - spent(spent_user_, s.user) < kDust) return SpeedVerdict::kUserLimit;
  if (lim_.node - spent(spent_node_, s.node) < kDust) return SpeedVerdict::kNodeLimit;
  const double left = budget_left(s.user, s.node, s.time);
  const double step = std::copysign(std::min(std::abs(want), left), want);
  const double next = std::clamp(e + step, -lim_.max_abs, lim_.max_abs);
  const double amount = std::abs(next - e);
  if (amount < kDust) return SpeedVerdict::kNoChange;
  est_[s.node] = next;
  Move m{s.time, s.user, s.node, amount};
  charge(m, +1);
  // kept in time order even if the clock went back: expire() reads the front
  auto at = std::upper_bound(moves_.begin(), moves_.end(), m.time,
                             [](std::int64_t t, const Move& x) { return t < x.time; });
  moves_.insert(at, std::move(m));
  if (moved) *moved = next - e;
  return SpeedVerdict::kMoved;
}

double SpeedEstimates::estimate(std::string_view node) const {
  auto it = est_.find(node);
  return it == est_.end() ? 0.0 : it->second;
}

void SpeedEstimates::save(std::ostream& out) const {
  const auto old = out.precision(17);
  for (const auto& [node, e] : est_) out << "est " << node << ' ' << e << '\n';
  for (const Move& m : moves_) out << "move " << m.time << ' ' << m.user << ' ' << m.amount << ' ' << m.node << '\n';
  out.precision(old);
}

bool SpeedEstimates::restore_line(std::string_view line) {
  std::istringstream in{std::string(line)};
  std::string kind, node, extra;
  in >> kind;
  if (kind == "est") {
    double e = 0;
    if (!(in >> node >> e) || (in >> extra) || !plain_token(node) || !std::isfinite(e)) return false;
    est_[node] = std::clamp(e, -lim_.max_abs, lim_.max_abs);
    return true;
  }
  if (kind == "move") {
    Move m{};
    if (!(in >> m.time >> m.user >> m.amount >> m.node) || (in >> extra) || !plain_token(m.node) ||
        !std::isfinite(m.amount) || m.amount < 0)
      return false;
    charge(m, +1);
    auto at = std::upper_bound(moves_.begin(), moves_.end(), m.time,
                               [](std::int64_t t, const Move& x) { return t < x.time; });
    moves_.insert(at, std::move(m));
    return true;
  }
  return false;
}

void SpeedEstimates::clear() {
  est_.clear();
  moves_.clear();
  spent_user_node_.clear();
  spent_user_.clear();
  spent_node_.clear();
}

}  // namespace duet::plugin
