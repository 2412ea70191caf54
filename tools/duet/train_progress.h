// duet train's progress lines on standard error, on a terminal or not (a
// log file, a batch job's output): the episode, its reward, the validation
// ratio and the time left, at most one line every `every_s` seconds besides
// the first episode, each evaluation and the last episode.
#pragma once

#include <cstdio>
#include <string>

#include "policy/learn/train/trainer.h"

namespace duet::cli {

// "duet train: ppo 12/50 (run 14/54): reward -812.3 job-h, rollout JCT
// 5321 s, 3 preemptions, validation 0.93x the start (4950 s), 2m10s, ETA 7m40s".
// hours: the --hours budget (0: none), which bounds the ETA.
std::string train_progress_line(const learn::TrainProgress& p, double hours);

class TrainProgressLines {
 public:
  TrainProgressLines(std::FILE* out, double hours, double every_s = 10) : out_(out), hours_(hours), every_s_(every_s) {}
  void operator()(const learn::TrainProgress& p);

 private:
  std::FILE* out_;
  double hours_, every_s_;
  double last_s_ = -1;  // elapsed time of the last line (-1: none yet)
};

}  // namespace duet::cli
