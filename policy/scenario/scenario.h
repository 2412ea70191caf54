// The scenario generator: from a seed and a spec (spec.h), a workload as a
// duet-trace(5) and a cluster as a duet-cluster(5) (duet-scenario(1)).
//
// Order of the draws, each from its own seeded stream so that changing one
// part leaves the others as they were: the spec's ranges, the cluster, the
// jobs (size, duration, type, user), the arrival process. The arrival times
// are scaled last by one factor so that the offered load
//   work / (last submit x capacity)
// is the spec's exactly, where work = sum of duration x GPUs (reference
// GPU-seconds) and capacity = sum over machines of GPUs x the type's mean
// speed (reference GPUs) -- the measure duet eval's protocol sizes its
// clusters by.
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
};

// Throws std::invalid_argument for a spec that cannot be generated (no job
// size fits the cluster, a philly source without its data).
Scenario generate_scenario(const ScenarioSpec& spec, uint64_t seed, const ThroughputTable& table,
                           const ScenarioSources& sources = {});

// Reference-GPU capacity: GPUs x the type's mean speed over job types.
double reference_capacity(const ClusterModel& c);
// work / (last submit x capacity); 0 for an empty trace.
double offered_load(const Trace& t, const ClusterModel& c);
// Hill's estimator of a tail index from the k largest values (k < n).
double hill_tail_index(std::vector<double> values, size_t k);

}  // namespace duet
