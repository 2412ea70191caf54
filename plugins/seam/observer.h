// Online learning hook: select/duet reports every finished job here; the
// observer's state travels with Slurm's state (StateSaveLocation).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "plugins/seam/views.h"

namespace duet::plugin {

struct JobOutcome {
  JobInfo job;                     // as at submit (gpus, type, name, limits)
  std::vector<std::string> nodes;  // where it ran
  double run_s = 0;                // end - start, seconds, as slurmctld measured them
  bool completed = false;          // ended in COMPLETED (not failed/cancelled)
  std::int64_t end = 0;            // Unix seconds
};

class Observer {
 public:
  virtual ~Observer() = default;
  virtual std::string name() const = 0;
  // The cluster as it is now; select/duet calls it before restore() and
  // observe(), so a learned observer can map node names to its own state.
  virtual void set_cluster(const ClusterInfo& cluster) { (void)cluster; }
  virtual void observe(const JobOutcome& outcome) = 0;
  // Serialised state (opaque to the plugin; it adds its own header).
  virtual std::string save() const = 0;
  // Replaces the state with a saved one; false (and *error) for bytes it
  // cannot read, leaving the state as it was.
  virtual bool restore(std::string_view bytes, std::string* error) = 0;
  // One-line human summary (logs, tests): equal states give equal summaries.
  virtual std::string summary() const = 0;
};

// Builtin: per node, number of finished jobs and their mean and total run
// time. Text state, one line per node.
std::unique_ptr<Observer> make_node_stats_observer();

}  // namespace duet::plugin
