// select/duet's own work, apart from forwarding to cons_tres: the placement
// agent's node bias, the explanation, the observer and its saved state.
// All functions catch everything: no C++ exception reaches Slurm.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "plugins/seam/explain.h"
#include "plugins/slurm/slurm_internal.h"

namespace duet::plugin {

void steering_init();  // slurmctld only: read duet.conf, build the agent
void steering_fini();
void steering_reconfigure();  // re-read duet.conf (scontrol reconfigure)
void steering_state_save(const char* dir);
void steering_state_restore(const char* dir);
void steering_job_begin(job_record_t* job);
void steering_job_fini(job_record_t* job);

// For one select_p_job_test call: ranks the nodes for the job and raises the
// node order cons_tres reads (node_record_t::sched_weight) so preferred nodes
// come first within the admin's Weight order; restores it on destruction
// (keeping cons_tres's own low-byte update). Does nothing outside slurmctld,
// for jobs without GPUs, or without a ranker.
class NodeBias {
 public:
  NodeBias(job_record_t* job, bitstr_t* candidates, uint16_t mode);
  ~NodeBias();
  void done(bool selected);  // remembers why, for the job's explanation
  // The ranker asks for one node (NodeRanker::one_node) in a test that may
  // start the job or plans when it will.
  bool one_node() const { return one_node_; }
  // The constructor left nodes below the speed floor out of the candidates
  // (NodeRanker::keep_off).
  bool kept_off() const { return !below_floor_.empty(); }
  // Puts those nodes back into `candidates` (the job could never run on the
  // others: too few of them for its node count, CPUs or memory).
  void drop_floor(bitstr_t* candidates);
  NodeBias(const NodeBias&) = delete;
  NodeBias& operator=(const NodeBias&) = delete;

 private:
  job_record_t* job_;
  uint16_t mode_;
  std::vector<std::pair<node_record_t*, uint64_t>> saved_;  // node, weight before
  std::string reason_;
  bool ranked_ = false;
  bool one_node_ = false;
  std::vector<RankedNode> nodes_;  // the nodes the job may use, ranked
  std::vector<int> below_floor_;   // node_record_t::index of the nodes keep_off left out
  std::string floor_note_;         // "; N nodes below the speed floor left out"
  std::vector<std::pair<size_t, std::string>> floored_;  // nodes_ index, not_taken without the floor
};

}  // namespace duet::plugin
