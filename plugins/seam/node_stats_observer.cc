// node-stats: the builtin observer. Per node, finished jobs and run seconds;
// enough to show that learned state survives a slurmctld restart.
#include <cstdio>
#include <map>
#include <sstream>

#include "plugins/seam/observer.h"

namespace duet::plugin {
namespace {

struct NodeStats {
  uint64_t jobs = 0;
  double run_s = 0;
};

class NodeStatsObserver final : public Observer {
 public:
  std::string name() const override { return "node-stats"; }

  void observe(const JobOutcome& o) override {
    for (const std::string& n : o.nodes) {
      NodeStats& s = stats_[n];
      s.jobs += 1;
      s.run_s += o.run_s;
    }
  }

  std::string save() const override {
    std::ostringstream out;
    out.precision(17);
    for (const auto& [node, s] : stats_) out << node << ' ' << s.jobs << ' ' << s.run_s << '\n';
    return out.str();
  }

  bool restore(std::string_view bytes, std::string* error) override {
    std::map<std::string, NodeStats> fresh;
    std::istringstream in{std::string(bytes)};
    std::string line;
    int lineno = 0;
    while (std::getline(in, line)) {
      ++lineno;
      if (line.empty()) continue;
      std::istringstream ls(line);
      std::string node;
      NodeStats s;
      if (!(ls >> node >> s.jobs >> s.run_s) || s.run_s < 0) {
        *error = "line " + std::to_string(lineno) + ": expected 'NODE JOBS RUN_SECONDS'";
        return false;
      }
      fresh[node] = s;
    }
    stats_ = std::move(fresh);
    return true;
  }

  std::string summary() const override {
    std::string out;
    for (const auto& [node, s] : stats_) {
      char buf[160];
      std::snprintf(buf, sizeof buf, "%s%s:jobs=%llu,mean_run_s=%.3f", out.empty() ? "" : " ", node.c_str(),
                    static_cast<unsigned long long>(s.jobs), s.jobs ? s.run_s / s.jobs : 0.0);
      out += buf;
    }
    return out.empty() ? "(no observations)" : out;
  }

 private:
  std::map<std::string, NodeStats> stats_;
};

}  // namespace

std::unique_ptr<Observer> make_node_stats_observer() { return std::make_unique<NodeStatsObserver>(); }

}  // namespace duet::plugin
