// A site's own Slurm history as a duet-trace(5): the allocations sacct
// recorded (replay/sacct.h) become jobs with submit seconds from the first
// kept job, GPUs and GPU types from AllocTRES (ReqTRES when AllocTRES names
// none), user, account as vc, and run time End - Start times the speed of
// the slowest node the job ran on when node speeds are known. The rows of a
// requeued job (sacct -D: one per run) are one job: submitted at its first
// run's Submit, its run time that of all its runs, the rest from its last.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "policy/io/node_speeds.h"
#include "policy/io/trace.h"
#include "replay/sacct.h"

namespace duet::replay {

// Node speeds (policy/io/node_speeds.h): a speed relative to a V100
// (duet-emujob --known-speeds) gives durations on duet's reference GPU, as
// duet-trace(5) means them; the factor within the node's GPU type
// (contrib/testcluster's nodes.csv) gives durations on a typical machine of
// the type the job ran on.
using duet::NodeSpeeds;
using duet::read_node_speeds;

struct SacctTraceOptions {
  NodeSpeeds speeds;                    // empty: run times as measured
  std::vector<std::string> partitions;  // empty: every partition
  bool vc_from_partition = false;       // vc = Partition instead of Account
};

// What was left out, for the summary on stderr.
struct SacctTraceCounts {
  int steps = 0, never_ran = 0, not_finished = 0, cpu_only = 0, other_partition = 0;
  int requeued = 0;  // kept jobs that ran more than once (sacct -D rows merged)
};

// `name` and each job's line are used in errors (InputError): a node of a
// job missing from the speeds, a JobID that is not an integer without
// JobIDRaw, a job that ends before it starts.
Trace trace_from_sacct(const std::vector<SacctJob>& jobs, const std::string& name, const SacctTraceOptions& opt,
                       SacctTraceCounts& counts);

}  // namespace duet::replay
