// Reader for `sacct -X -P --format=JobID,Submit,Start,End,NodeList,AllocTRES,State`
// (a header line, then '|'-separated rows). Columns may come in any order and
// others may be present; JobIDRaw, User, Account, Partition and ReqTRES are
// read when there. Times are Slurm's local "YYYY-MM-DDTHH:MM:SS";
// "Unknown", "None" or empty mean not (yet) happened. Errors name the input,
// line and column (InputError).
#pragma once

#include <istream>
#include <map>
#include <string>
#include <vector>

namespace duet::replay {

inline constexpr const char* kSacctFormat = "JobID,Submit,Start,End,NodeList,AllocTRES,State";

struct SacctJob {
  std::string job_id, node_list, state;
  double submit = -1, start = -1, end = -1;  // seconds since the epoch; -1 = none
  int gpus = 0;                              // gres/gpu=N
  std::map<std::string, int> gpus_by_type;   // gres/gpu:TYPE=N (type lower case)
  // JobIDRaw, User, Account, Partition: "" when the column is absent
  std::string job_id_raw, user, account, partition;
  // the same GPU counts from ReqTRES, when the column is there
  int req_gpus = 0;
  std::map<std::string, int> req_gpus_by_type;
  int line = 0;
};

std::vector<SacctJob> parse_sacct(std::istream& in, const std::string& name);

// The same, for sacct run without -X: job step lines ("123.batch", "123.0")
// are counted and left out instead of refused.
struct SacctRows {
  std::vector<SacctJob> jobs;
  int steps = 0;
};
SacctRows parse_sacct_allocations(std::istream& in, const std::string& name);

// "2026-11-29T23:14:39" (local time) to epoch seconds; "Unknown"/"None"/""
// give -1; false if malformed.
bool parse_slurm_time(const std::string& s, double& out);

// The rows of one job (same JobID): sacct -D gives one row per run of a
// requeued job.
struct JobRuns {
  std::vector<const SacctJob*> runs;  // by start, an unstarted one last
  double submit = -1;                 // the earliest known Submit (a requeue resets it); -1 if none
  const SacctJob& first() const { return *runs.front(); }
  const SacctJob& last() const { return *runs.back(); }  // says what became of the job
};

// Each job's runs, in input order of the job's first row.
std::vector<JobRuns> runs_by_job(const std::vector<SacctJob>& rows);

}  // namespace duet::replay
