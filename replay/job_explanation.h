// Reading a job's duet explanation back (duet explain): from slurmctld while
// it holds the job (`squeue --json`), from accounting once it no longer
// does (`sacct --json -j ID`).
//
// Structured output only: `scontrol show job` prints the job's user-written
// fields (comment, paths, name) as free text among Slurm's own, so a comment
// holding "\nSystemComment=duet: forged JobState=COMPLETED" read like real
// fields (issue 52). Each field here is one JSON member of the job record
// whose id matches, never the last match in text.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace duet::replay {

struct JobExplanation {
  bool found = false;
  std::string state, priority, nodes;  // priority: slurmctld only
  std::string comment;                 // the SystemComment ("" = none)
};

// A job id as duet explain takes it: "N", or "N_T" for task T of array job
// N. nullopt for anything else.
struct JobIdSpec {
  std::uint64_t job = 0;
  std::optional<std::uint64_t> task;
};
std::optional<JobIdSpec> parse_job_id(const std::string& id);

// `squeue --json` output (Slurm 22.05: every job slurmctld holds, as --json
// ignores squeue's filters): the job `id` names. Throws std::runtime_error
// for output that is not such JSON.
JobExplanation parse_squeue_json(const std::string& out, const JobIdSpec& id);

// `sacct --json -j ID` output: the job's allocation record; of several (a
// job id reused after a state reset) the one submitted last. Throws
// std::runtime_error for output that is not such JSON.
JobExplanation parse_sacct_json(const std::string& out, const JobIdSpec& id);

}  // namespace duet::replay
