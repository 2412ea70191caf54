// Reading a job's duet explanation back (duet explain): from slurmctld while
// it holds the job (`scontrol show job`), from accounting once it no longer
// does (`sacct -X -n -P -o JobID,State,NodeList,SystemComment`).
#pragma once

#include <string>

namespace duet::replay {

struct JobExplanation {
  bool found = false;
  std::string state, priority, nodes;  // priority: slurmctld only
  std::string comment;                 // the SystemComment ("" = none)
};

// `scontrol show job ID` output (one job).
JobExplanation parse_scontrol_job(const std::string& out);

// `sacct -j ID -X -n -P -o JobID,State,NodeList,SystemComment` output: the
// last row of job `id` (a job id reused after a state reset has older rows).
JobExplanation parse_sacct_job(const std::string& out, const std::string& id);

}  // namespace duet::replay
