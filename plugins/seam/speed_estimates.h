// Node speeds learned online by select/duet's placement agent, such that no
// user can move them far (placement_model.cc; man duet.conf(5), LEARNED
// AGENTS). Slurm-free.
//
// A node's estimate e is a log speed factor: its speed is its known speed
// (NodeSpeedsFile) x exp(e), and e is 0 until something was learned. A
// sample is one measurement of that factor from one finished job
// (run_history.h: the job's run time, as slurmctld measured it, against what
// the same user's same jobs took on other nodes). Nothing a user writes (a
// comment's ref=, a job name's text, a file) is a sample.
//
// Robust: a sample moves the estimate towards itself by at most max_step (a
// clipped step; the estimate tracks a median-like centre of the samples, and
// a sample off by 1e300 moves it no more than one off by max_step).
// Bounded: every step is charged, by its size, to three budgets over a
// rolling window of window_s seconds:
//   one user on one node    user_node   (default 0.10)
//   one user on all nodes   user_total  (default 0.20, the sum over nodes)
//   all users on one node   node        (default 0.30)
// A step is cut to what is left of the tightest of them; a sample that finds
// one spent moves nothing. Hence the bound that duet.conf(5) documents: in any
// hour, one user's jobs move one node's estimate by at most 0.10, and the
// estimates of all nodes by at most 0.20 in sum (so a node's GP mean, a
// contraction of the estimates, by at most 0.20: placement_model.cc); all
// users together move one node by at most 0.30 an hour, and an estimate
// never leaves [-2, 2]. Moves are kept (and saved) for one window, so a
// restart of slurmctld does not refill the budgets.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>

namespace duet::plugin {

struct SpeedLimits {
  double max_step = 0.05;      // largest move of one sample
  double user_node = 0.10;     // one user, one node, per window
  double user_total = 0.20;    // one user, all nodes together, per window
  double node = 0.30;          // all users, one node, per window
  double max_abs = 2.0;        // |estimate| at most
  std::int64_t window_s = 3600;  // the rolling window (seconds)
};

struct SpeedSample {
  std::string node;
  std::uint32_t user = 0;  // the job's uid: whose budget pays
  double value = 0;        // log(expected run time / measured run time) at the node's known speed
  std::int64_t time = 0;   // Unix seconds (the job's end)
};

enum class SpeedVerdict {
  kMoved,          // the estimate moved (perhaps by less than asked: a budget ran out)
  kNoChange,       // the sample agrees with the estimate (or it sits at +-max_abs)
  kUserNodeLimit,  // this user moved this node by user_node within the window
  kUserLimit,      // this user moved all nodes by user_total within the window
  kNodeLimit,      // all users moved this node by `node` within the window
  kInvalid,        // no node name or a value that is not finite
};
const char* to_string(SpeedVerdict v);

class SpeedEstimates {
 public:
  explicit SpeedEstimates(SpeedLimits limits = {}) : lim_(limits) {}

  const SpeedLimits& limits() const { return lim_; }
  // *moved (if given): the signed change of the estimate (0 unless kMoved).
  SpeedVerdict add(const SpeedSample& s, double* moved = nullptr);
  double estimate(std::string_view node) const;  // 0 for a node never moved
  const std::map<std::string, double, std::less<>>& estimates() const { return est_; }
  std::size_t recent_moves() const { return moves_.size(); }
  // What user `user` may still move node `node` by at time `now`.
  double budget_left(std::uint32_t user, const std::string& node, std::int64_t now);

  // Lines "est NODE VALUE" and "move TIME USER AMOUNT NODE".
  void save(std::ostream& out) const;
  // One saved line; false when it is not one of ours or does not read.
  bool restore_line(std::string_view line);
  void clear();

 private:
  struct Move {
    std::int64_t time;
    std::uint32_t user;
    std::string node;
    double amount;  // |step|
  };
  void expire(std::int64_t now);
  void charge(const Move& m, double sign);

  SpeedLimits lim_;
  std::map<std::string, double, std::less<>> est_;
  std::deque<Move> moves_;  // within the window, oldest first
  // Sums of the moves above, per budget.
  std::map<std::pair<std::uint32_t, std::string>, double> spent_user_node_;
  std::map<std::uint32_t, double> spent_user_;
  std::map<std::string, double> spent_node_;
};

}  // namespace duet::plugin
