// What the ordering plugins remember of the jobs they preempted (preemptor.h):
// the service each had received in its earlier runs, added to its later
// runs' features. This is the text of the state file that keeps it across
// slurmctld restarts (duet.conf(5), PREEMPTION). Slurm-free.
//
// The file is text, as select/duet's observer state: a header line, then
// one line per job, in job id order:
//   duet-preempt-state 1 2
//   41 620.5 158848 1
//   57 4000 32000 2
// header: magic, format version, number of job lines (a file cut short
// is refused, not half read); job line: job id, run seconds and GPU-seconds
// of its earlier runs, preemptions. Every line ends in a newline.
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
};

using EarlierServices = std::map<uint32_t, EarlierService>;  // by job id

inline constexpr std::string_view kPreemptStateMagic = "duet-preempt-state";
inline constexpr int kPreemptStateVersion = 1;
// Far above what any cluster keeps (a line is < 80 bytes, Slurm's
// MaxJobCount 10,000 by default); a bigger file is not read.
inline constexpr size_t kPreemptStateMaxBytes = size_t{16} << 20;

std::string encode_preempt_state(const EarlierServices& jobs);

// True and *jobs replaced when `text` is a whole, valid file; otherwise
// false, *jobs untouched and *error says what is wrong for one log line
// ("line 3: expected 'JOBID RUN_S GPU_S PREEMPTIONS'", "truncated: 1 of 2
// jobs"). Never throws for any input (std::bad_alloc aside).
bool decode_preempt_state(std::string_view text, EarlierServices* jobs, std::string* error);

// "JobId=41 (1x, 620 s, 158848 GPU-s), JobId=57 (...) +3 more": the jobs
// for a log line, at most `named` of them.
std::string preempt_state_summary(const EarlierServices& jobs, size_t named = 8);

}  // namespace duet::plugin
