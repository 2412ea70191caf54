// prefer-fast: a test ranker that orders nodes by a known speed factor.
#include <map>

#include "plugins/seam/node_ranker.h"
#include "policy/io/csv.h"
#include "policy/io/node_speeds.h"

namespace duet::plugin {
namespace {

class PreferFastRanker final : public NodeRanker {
 public:
  explicit PreferFastRanker(std::map<std::string, double> speeds) : speeds_(std::move(speeds)) {}
  std::string name() const override { return "prefer-fast"; }
  bool rank(const JobInfo&, const ClusterInfo& cluster, std::vector<double>& preference, std::string* reason,
            std::string*) override {
    preference.assign(cluster.nodes.size(), 0.0);
    for (size_t i = 0; i < cluster.nodes.size(); ++i) {
      auto it = speeds_.find(cluster.nodes[i].name);
      preference[i] = it == speeds_.end() ? 0.0 : it->second;  // unknown = slowest
    }
    if (reason) *reason = "prefer-fast: fastest free nodes first";
    return true;
  }

 private:
  std::map<std::string, double> speeds_;
};

}  // namespace

bool read_node_speeds(const std::string& csv_path, std::map<std::string, double>* speeds, std::string* error) {
  if (csv_path.empty()) {
    if (error) *error = ":0: NodeSpeedsFile not set";
    return false;
  }
  try {
    *speeds = duet::read_node_speeds(csv_path);
    return true;
  } catch (const InputError& e) {
    if (error) *error = e.what();
    return false;
  }
}

std::unique_ptr<NodeRanker> make_prefer_fast_ranker(const std::string& csv_path, std::string* error) {
  std::map<std::string, double> speeds;
  std::string err;
  if (!read_node_speeds(csv_path, &speeds, &err)) {
    if (error) *error = csv_path.empty() ? "not set (Ranker=prefer-fast needs it)" : err;
    return nullptr;
  }
  return std::make_unique<PreferFastRanker>(std::move(speeds));
}

}  // namespace duet::plugin
