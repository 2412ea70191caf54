// The placement agent as select/duet sees it: a preference over nodes for one
// job. select/duet turns it into cons_tres's node order (sched_weight), so
// cons_tres still decides what fits (cores, memory, GRES) and the admin's node
// Weight still comes first.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "plugins/seam/duet_conf.h"
#include "plugins/seam/views.h"

namespace duet::plugin {

class AgentChannel;  // plugins/channel/agent_channel.h

class NodeRanker {
 public:
  virtual ~NodeRanker() = default;
  virtual std::string name() const = 0;
  // Fills `preference` with one value per cluster.nodes entry: higher = use
  // first; equal values = no preference between them. Sets *reason (when not
  // null) to a short human text (goes into the job's explanation). Returns
  // false and sets *error when it cannot rank.
  virtual bool rank(const JobInfo& job, const ClusterInfo& cluster, std::vector<double>& preference,
                    std::string* reason, std::string* error) = 0;
  // The agents' messages (agent_channel.h). A learned ranker connected to a
  // channel publishes its message to the ordering agent there (when its GP or
  // the nodes' occupancy changed) and ranks a job's nodes with the ordering
  // agent's message for that job (none: zeros); the others ignore it.
  virtual void connect(AgentChannel* channel) { (void)channel; }
  // True when the job is to start on one node: select/duet then asks
  // cons_tres for one node only, and the job waits while none has its GPUs
  // free rather than being spread (the learned placement's consolidation,
  // policy/learn/agents/placement_routine.h). Default: no such rule.
  virtual bool one_node(const JobInfo& job, const ClusterInfo& cluster) {
    (void)job;
    (void)cluster;
    return false;
  }
  // Sets off[i] for each cluster.nodes[i] the job must not use now;
  // `candidate` marks the nodes the test offers (the job's partition and
  // constraints). select/duet leaves those nodes out of the test, so the job
  // waits while the others cannot hold it (the learned placement's spread
  // floor, policy/learn/agents/machine_set.h). Default: none.
  virtual void keep_off(const JobInfo& job, const ClusterInfo& cluster, const std::vector<bool>& candidate,
                        std::vector<bool>& off) {
    (void)job;
    (void)candidate;
    off.assign(cluster.nodes.size(), false);
  }
};

// Reads a node speeds CSV (policy/io/node_speeds.h). Returns false and sets
// *error ("file:line:column: what was expected").
bool read_node_speeds(const std::string& csv_path, std::map<std::string, double>* speeds, std::string* error);

// Test hook: nodes by their speed factor from a CSV with a header row and
// columns `node` and `speed` (the test cluster's nodes.csv). Fails (nullptr,
// *error set) if the file cannot be read or parsed.
std::unique_ptr<NodeRanker> make_prefer_fast_ranker(const std::string& csv_path, std::string* error);

}  // namespace duet::plugin
