// `duet check-config`: is a site's duet setup what the plugins will accept?
// Slurm-free (plugins/seam's parsers and checks, the agents' loaders), so an
// admin runs it before switching slurmctld over, and every problem it finds
// is one the plugins would log and then fall back from:
//   duet.conf   every key and value (duet_conf.h);
//   the models  format, version, checksum, and that each loads as the agent
//               its key feeds (Scorer=model, Ranker=model);
//   NodeSpeedsFile, JobTypeSpeedsFile  readable and well formed;
//   trust       duet.conf, the models and the speeds files as file_trust.h
//               requires for root and slurm.conf's SlurmUser;
//   slurm.conf  the lines duet needs (etc/slurm.conf.d/duet.conf), or with
//               `pending`, those duet-admin enable will write (enable_lines.h);
//   preemption  Preemption=requeue with a model that is not preemptive, or
//               next to Slurm's own PreemptType: warnings (the plugins run,
//               they only preempt nothing, or two mechanisms preempt).
// The agents' loaders register themselves (order_scorer.h,
// placement_agent.h): a program running the checker compiles in
// $(duet_check_agent_sources) (plugins/check/Makefile.inc), or a model
// cannot load.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "plugins/check/enable_lines.h"

namespace duet::plugin {

struct CheckProblem {
  std::string file;
  int line = 0;  // 0: about the file as a whole
  std::string message;
  std::string text() const;  // "FILE:LINE: message" or "FILE: message"
};

struct CheckInput {
  std::string duet_conf;   // duet.conf to check
  std::string slurm_conf;  // slurm.conf to check
  // A missing duet.conf means all defaults to the plugins; when the admin
  // named it, it is a problem.
  bool duet_conf_required = false;
  // Before the switch: slurm.conf as `duet-admin enable --mode` will leave
  // it (its lines for the keys it owns in place of the file's).
  std::optional<EnableMode> pending;
};

struct CheckResult {
  std::vector<CheckProblem> problems;  // in the order found
  std::string summary;                 // what was checked, for "ok: ..."
  std::vector<CheckProblem> warnings;  // a setup that runs, but not as its keys suggest
};

// Never throws.
CheckResult check_duet_setup(const CheckInput& input);

}  // namespace duet::plugin
