// The generator's parts, each drawing from the stream it is given
// (scenario.cc calls them in order). Internal to policy/scenario.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "policy/io/cluster.h"
#include "policy/io/trace.h"
#include "policy/model/throughput.h"
#include "policy/scenario/scenario.h"
#include "policy/util/rng.h"

namespace duet::scenario {

// A value of the range: uniform, or log-uniform when `log`; an integer key
// rounds it.
double draw(const Range& r, Rng& rng, bool log);

// The synthetic and pai cluster sources. `s` is resolved (its cluster_gpus
// is the target drawn); `gpus` is the range the total must stay in.
ClusterSpec make_cluster(const ScenarioSpec& s, const Range& gpus, const ThroughputTable& table,
                         const ScenarioSources& src, Rng& rng);

// Jobs with sizes, durations, types and users, submit 0, ids unset;
// *vc_used names the Philly VC of the philly-vc source.
std::vector<JobSpec> make_jobs(const ScenarioSpec& s, int cluster_gpus, const ThroughputTable& table,
                               const ScenarioSources& src, Rng& rng, std::string* vc_used);

// n arrival times, sorted, the first at 0, at a mean rate near `rate` (per s).
std::vector<double> make_arrivals(const ScenarioSpec& s, int n, double rate, Rng& rng);

}  // namespace duet::scenario
