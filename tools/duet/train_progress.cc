#include "tools/duet/train_progress.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace duet::cli {
namespace {

std::string duration(double s) {
  const long t = std::lround(std::max(0.0, s));
  if (t >= 3600) return fmt::format("{}h{:02}m", t / 3600, t % 3600 / 60);
  if (t >= 60) return fmt::format("{}m{:02}s", t / 60, t % 60);
  return fmt::format("{}s", t);
}

}  // namespace

std::string train_progress_line(const learn::TrainProgress& p, double hours) {
  std::string s = fmt::format(
      "duet train: {} {}/{} (run {}/{}): reward {:.1f} job-h, rollout JCT {:.0f} s, {} "
      "preemption{}",
      p.phase, p.episode, p.phase_total, p.done, p.total, p.reward, p.rollout_jct_s, p.preemptions,
      p.preemptions == 1 ? "" : "s");
  if (p.initial_jct_s > 0 && p.eval_jct_s > 0)
    s += fmt::format(", validation {:.2f}x the start ({:.0f} s)", p.eval_jct_s / p.initial_jct_s, p.eval_jct_s);
  s += ", " + duration(p.elapsed_s);
  if (p.done < p.total && p.done > 0) {
    double left = p.elapsed_s / p.done * (p.total - p.done);
    if (hours > 0) left = std::min(left, std::max(0.0, hours * 3600 - p.elapsed_s));
    s += ", ETA " + duration(left);
  }
  return s;
}

void TrainProgressLines::operator()(const learn::TrainProgress& p) {
  // the first and the last always; an evaluation at most once a second
  // (with --eval-every 1 a fast run evaluates each episode); others once
  // every every_s
  const bool first = last_s_ < 0, last = p.done == p.total;
  const double since = p.elapsed_s - last_s_;
  if (!first && !last && since < (p.evaluated ? std::min(every_s_, 1.0) : every_s_)) return;
  last_s_ = p.elapsed_s;
  std::fprintf(out_, "%s\n", train_progress_line(p, hours_).c_str());
  std::fflush(out_);
}

}  // namespace duet::cli
