// Live state of the emulated jobs: each running duet-emujob writes one file
// per node it runs on, STATE_DIR/NODE/JOBID.PID, holding its job type name,
// and removes it on exit. Entries whose process is gone (or a zombie) are
// stale and ignored (and removed when seen). All slurmd of a test cluster
// share one host, so a pid identifies the process.
#pragma once

#include <string>
#include <vector>

namespace duet::replay {

struct EmuEntry {
  std::string node, job_id, job_type;
  long pid = 0;
};

class EmuRegistry {
 public:
  explicit EmuRegistry(std::string state_dir) : dir_(std::move(state_dir)) {}
  const std::string& dir() const { return dir_; }
  // Registers this process (pid) on each node; throws std::runtime_error.
  void enter(const std::vector<std::string>& nodes, const std::string& job_id, long pid, const std::string& job_type);
  void leave();  // removes what enter() wrote; never throws
  // Live entries on `node`, except those of `self_pid`.
  std::vector<EmuEntry> on_node(const std::string& node, long self_pid) const;

 private:
  std::string dir_;
  std::vector<std::string> written_;
};

bool process_alive(long pid);  // exists and is not a zombie

}  // namespace duet::replay
