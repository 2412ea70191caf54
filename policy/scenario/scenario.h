// The scenario generator: from a seed and a spec (spec.h), a workload as a
// duet-trace(5) and a cluster as a duet-cluster(5) (duet-scenario(1)).
//
// Order of the draws, each from its own seeded stream so that changing one
// part leaves the others as they were: the spec's ranges, the cluster, the
// jobs (size, duration, type, user), the arrival process. The arrival times
// are scaled last by one factor so that the offered load
//   sum of GPUs x min(duration, S) / (S x capacity),  S = last submit,
// is the spec's exactly, where durations are reference seconds and capacity
// = sum over machines of GPUs x the type's mean speed (reference GPUs) --
// the measure duet eval's protocol sizes its clusters by. A job counts only
// the work it can do inside the window of submissions: otherwise one job of
// a heavy tail can hold most of the work, spread the submissions thin, and
// leave every other job an idle cluster.
#pragma once

#include <cstdint>
#include <string>

#include "policy/io/cluster.h"
#include "policy/io/trace.h"
#include "policy/model/cluster_model.h"
#include "policy/model/throughput.h"
#include "policy/scenario/spec.h"

namespace duet {

// The data files the philly and pai sources resample; loaded once.
struct ScenarioSources {
  const Trace* philly = nullptr;     // read_philly of data/philly/philly.csv
  const ClusterSpec* pai = nullptr;  // read_pai(...).cluster
};

struct Scenario {
  Trace trace;
  ClusterSpec cluster;
  ScenarioSpec resolved;  // every range drawn (LO = HI) but speed, which each flat type draws
  std::string philly_vc;  // philly-vc: the VC resampled
  double capacity = 0;    // reference GPUs
  double offered_load = 0;
  double max_load = 0;  // the most these jobs can offer: their GPUs over the capacity
  // The load asked was out of these jobs' reach: offered_load is what they reached.
  bool load_out_of_reach() const { return offered_load < resolved.load.lo * (1 - 1e-3); }
};

// Throws std::invalid_argument for a spec that cannot be generated (no job
// size fits the cluster, a philly source without its data). A load above
// max_load cannot be offered: the jobs are then submitted within the
// shortest one's duration and offered_load says what they offer.
Scenario generate_scenario(const ScenarioSpec& spec, uint64_t seed, const ThroughputTable& table,
                           const ScenarioSources& sources = {});

// Reference-GPU capacity: GPUs x the type's mean speed over job types.
double reference_capacity(const ClusterModel& c);
// The offered load of jobs submitted over `span` seconds (at least 1):
// sum of GPUs x min(duration, span) / (span x capacity); 0 without jobs.
double window_load(const std::vector<JobSpec>& jobs, double span, double capacity);
// window_load over the trace's last submit time.
double offered_load(const Trace& t, const ClusterModel& c);
// Hill's estimator of a tail index from the k largest values (k < n).
double hill_tail_index(std::vector<double> values, size_t k);

}  // namespace duet
