// What a simulation run measured, and its JSON form.
//
// JCT = finish - submit. Queueing delay = JCT - run time (all time not
// running, also after preemptions). Percentiles are nearest-rank:
// p-th = sorted[ceil(p/100 n) - 1]. Makespan = last finish - first submit.
// gpu_util = busy GPU-seconds / (total GPUs x makespan). Fees = busy
// GPU-seconds x the type's price; energy = busy GPU-seconds x the type's
// power (idle power not counted).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace duet {

struct Sample {
  double t = 0;
  int busy_gpus = 0;
  int queued = 0;
  int running = 0;
};

struct SimResult {
  std::string ordering, placement;
  bool oracle = false;
  bool ideal = false;
  uint64_t seed = 0;
  int total_gpus = 0;
  int64_t jobs = 0;
  double avg_jct_s = 0, p50_jct_s = 0, p95_jct_s = 0, p99_jct_s = 0;
  double avg_queue_s = 0, max_wait_s = 0, makespan_s = 0;
  double fees_usd = 0, energy_kwh = 0, gpu_util = 0;
  double busy_gpu_s = 0;
  uint64_t events = 0;
  int64_t preemptions = 0;
  std::map<std::string, double> vc_avg_jct_s;
  std::vector<double> jct_sorted;  // every job's JCT, ascending (CDF plots)
  std::vector<Sample> samples;     // cluster state over time (plots)
  double wall_s = 0;               // host time, not deterministic
};

double percentile(const std::vector<double>& sorted, double p);

// The summary as JSON (deterministic for a seed unless with_wall adds wall_s
// and events_per_s). Series (samples, JCTs) are not included.
nlohmann::ordered_json to_json(const SimResult& r, bool with_wall);

}  // namespace duet
