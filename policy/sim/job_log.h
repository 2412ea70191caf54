// One CSV row per job (duet sim --jobs-out): when it first started and when
// it finished, how long it queued, how often it was preempted and where its
// last run was placed. For seeing which jobs a policy makes wait.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <unordered_map>
#include <vector>

#include "policy/model/cluster_model.h"
#include "policy/sim/simulator.h"

namespace duet {

class JobLog : public SimObserver {
 public:
  explicit JobLog(const ClusterModel& cluster) : cluster_(cluster) {}
  void on_start(const JobView& job, const Placement& where, double now) override;
  void on_preempt(const JobView& job, double now) override;
  void on_finish(const JobView& job, double now) override;
  // A header, then the jobs that started, by job id (columns in duet-sim(1)).
  void write_csv(std::ostream& out) const;

 private:
  struct Row {
    int64_t id = 0;
    int gpus = 0;
    double submit = 0, first_start = -1, finish = -1, run = 0, queue = 0;
    int preemptions = 0;
    std::string user, vc, job_type, gpu_types, machines;
  };
  Row& row(const JobView& job);
  const ClusterModel& cluster_;
  std::vector<Row> rows_;
  std::unordered_map<int64_t, size_t> index_;
};

}  // namespace duet
