// What the ordering plugins remember of the jobs they preempted (preemptor.h):
// the service each had received in its earlier runs, added to its later
// runs' features. This is the text of the state file that keeps it across
// slurmctld restarts (duet.conf(5), PREEMPTION), and how a run's service is
// counted with it. Slurm-free.
//
// The file is text, as select/duet's observer state: a header line, then
// one line per job, in job id order:
//   duet-preempt-state 2 2
//   41 620.5 158848 1 1764681000
//   57 4000 32000 2 1764689000
// header: magic, format version, number of job lines (a file cut short
// is refused, not half read); job line: job id, run seconds and GPU-seconds
// of its earlier runs, preemptions, and the start time (Unix seconds) of the
// last run counted in them. Every line ends in a newline. Version 1 files
// (written before the start time was kept: four fields a line) are still
// read, with start time 0 (not known); version 2 is written.
//
// Why the start time: the file is synced right after a re-score's requeues,
// before slurmctld's own asynchronous save of the requeued jobs. A SIGKILL
// between the two leaves slurmctld, once restarted, with the older job
// state, in which the run just counted is still running with the same start
// time. That run is already in the earlier service: adding its run time
// again would count it twice, and preempting it again would record it a
// second time for good (run_service, record_preemption).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>

namespace duet::plugin {

struct EarlierService {
  double run_s = 0;           // of the runs that ended in a preemption
  double attained_gpu_s = 0;  // GPU-seconds of those runs
  uint32_t preemptions = 0;   // by this plugin
  int64_t last_start = 0;     // start time of the last run counted above; 0: not known
};

using EarlierServices = std::map<uint32_t, EarlierService>;  // by job id

inline constexpr std::string_view kPreemptStateMagic = "duet-preempt-state";
inline constexpr int kPreemptStateVersion = 2;  // written; version 1 is read too
// Far above what any cluster keeps (a line is < 100 bytes, Slurm's
// MaxJobCount 10,000 by default); a bigger file is not read.
inline constexpr size_t kPreemptStateMaxBytes = size_t{16} << 20;

std::string encode_preempt_state(const EarlierServices& jobs);

// True and *jobs replaced when `text` is a whole, valid file; otherwise
// false, *jobs untouched and *error says what is wrong for one log line
// ("line 3: expected 'JOBID RUN_S GPU_S PREEMPTIONS LAST_START'", "truncated:
// 1 of 2 jobs"). Never throws for any input (std::bad_alloc aside).
bool decode_preempt_state(std::string_view text, EarlierServices* jobs, std::string* error);

// "JobId=41 (1x, 620 s, 158848 GPU-s), JobId=57 (...) +3 more": the jobs
// for a log line, at most `named` of them.
std::string preempt_state_summary(const EarlierServices& jobs, size_t named = 8);

struct Service {
  double run_s = 0;
  double attained_gpu_s = 0;
};

// A running job's service over all its runs: its earlier runs' (`earlier`,
// null when it has none) and this run's (started at `start_time`, `run` so
// far), unless this run is the one last counted in `earlier` (the same start
// time: slurmctld restarted from a job state saved before its requeue, see
// above): then the earlier service alone.
Service run_service(const EarlierService* earlier, int64_t start_time, Service run);

// Records in *earlier (the job's entry, new or not) the preemption of the
// run started at `start_time` after `run`. False, and *earlier unchanged,
// when that run is already counted there (the same start time as the last
// run counted): it is not added, nor the preemption counted, twice.
bool record_preemption(EarlierService* earlier, int64_t start_time, Service run);

}  // namespace duet::plugin
