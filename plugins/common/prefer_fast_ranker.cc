// prefer-fast: a test ranker that orders nodes by a known speed factor.
#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>

#include "plugins/common/node_ranker.h"

namespace duet::plugin {
namespace {

std::vector<std::string> split_csv(const std::string& line) {
  std::vector<std::string> out;
  std::stringstream ss(line);
  std::string cell;
  while (std::getline(ss, cell, ',')) {
    while (!cell.empty() && (cell.back() == '\r' || cell.back() == ' ')) cell.pop_back();
    out.push_back(cell);
  }
  return out;
}

class PreferFastRanker final : public NodeRanker {
 public:
  explicit PreferFastRanker(std::map<std::string, double> speeds) : speeds_(std::move(speeds)) {}
  std::string name() const override { return "prefer-fast"; }
  std::string rank(const JobInfo&, const ClusterInfo& cluster, std::vector<double>& preference,
                   std::string* reason) override {
    preference.assign(cluster.nodes.size(), 0.0);
    for (size_t i = 0; i < cluster.nodes.size(); ++i) {
      auto it = speeds_.find(cluster.nodes[i].name);
      preference[i] = it == speeds_.end() ? 0.0 : it->second;  // unknown = slowest
    }
    if (reason) *reason = "prefer-fast: fastest free nodes first";
    return "";
  }

 private:
  std::map<std::string, double> speeds_;
};

}  // namespace

bool read_node_speeds(const std::string& csv_path, std::map<std::string, double>* speeds,
                      std::string* error) {
  auto fail = [&](int line, const std::string& msg) {
    if (error) *error = csv_path + ":" + std::to_string(line) + ": " + msg;
    return false;
  };
  if (csv_path.empty()) return fail(0, "NodeSpeedsFile not set");
  std::ifstream in(csv_path);
  if (!in) return fail(0, std::string("cannot read: ") + std::strerror(errno));
  std::string line;
  if (!std::getline(in, line)) return fail(1, "empty file, expected a header with node and speed");
  auto header = split_csv(line);
  int node_col = -1, speed_col = -1;
  for (size_t i = 0; i < header.size(); ++i) {
    if (header[i] == "node") node_col = static_cast<int>(i);
    if (header[i] == "speed") speed_col = static_cast<int>(i);
  }
  if (node_col < 0 || speed_col < 0) return fail(1, "header lacks a 'node' or 'speed' column");
  speeds->clear();
  int lineno = 1;
  while (std::getline(in, line)) {
    ++lineno;
    if (line.empty()) continue;
    auto cells = split_csv(line);
    if (static_cast<int>(cells.size()) <= std::max(node_col, speed_col))
      return fail(lineno, "expected " + std::to_string(header.size()) + " columns");
    const std::string& s = cells[speed_col];
    char* end = nullptr;
    double v = std::strtod(s.c_str(), &end);
    if (s.empty() || *end || !(v > 0)) return fail(lineno, "speed: expected a number > 0, got '" + s + "'");
    (*speeds)[cells[node_col]] = v;
  }
  if (speeds->empty()) return fail(lineno, "no nodes listed");
  return true;
}

std::unique_ptr<NodeRanker> make_prefer_fast_ranker(const std::string& csv_path,
                                                    std::string* error) {
  std::map<std::string, double> speeds;
  std::string err;
  if (!read_node_speeds(csv_path, &speeds, &err)) {
    if (error) *error = csv_path.empty() ? "not set (Ranker=prefer-fast needs it)" : err;
    return nullptr;
  }
  return std::make_unique<PreferFastRanker>(std::move(speeds));
}

}  // namespace duet::plugin
