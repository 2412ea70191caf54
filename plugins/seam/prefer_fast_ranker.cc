// prefer-fast: a test ranker that orders nodes by a known speed factor.
#include <algorithm>
#include <charconv>
#include <cstdio>
#include <map>
#include <sstream>

#include "plugins/seam/node_ranker.h"
#include "policy/io/limits.h"
#include "policy/util/printable.h"
#include "policy/util/safe_file.h"

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

std::string fmt_range(const char* what, const std::string& got) {
  char lo[32], hi[32];
  std::snprintf(lo, sizeof lo, "%g", kMinSpeed);
  std::snprintf(hi, sizeof hi, "%g", kMaxSpeed);
  return std::string(what) + ": expected a number from " + lo + " to " + hi + ", got '" + got + "'";
}

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

bool parse_node_speeds(std::string_view text, const std::string& name, std::map<std::string, double>* speeds,
                       std::string* error) {
  auto fail = [&](int line, const std::string& msg) {
    if (error) *error = printable(name) + ":" + std::to_string(line) + ": " + printable(msg);
    return false;
  };
  size_t pos = 0;
  int lineno = 0;
  std::string line;
  auto next_line = [&]() {
    if (pos >= text.size()) return false;
    size_t nl = text.find('\n', pos);
    if (nl == std::string_view::npos) nl = text.size();
    line.assign(text.substr(pos, nl - pos));
    pos = nl + 1;
    ++lineno;
    return true;
  };
  auto too_long = [&] { return line.size() > kMaxCsvLineBytes; };
  if (!next_line()) return fail(1, "empty file, expected a header with node and speed");
  if (too_long()) return fail(lineno, "line longer than " + std::to_string(kMaxCsvLineBytes) + " bytes");
  auto header = split_csv(line);
  int node_col = -1, speed_col = -1;
  for (size_t i = 0; i < header.size(); ++i) {
    if (header[i] == "node") node_col = static_cast<int>(i);
    if (header[i] == "speed") speed_col = static_cast<int>(i);
  }
  if (node_col < 0 || speed_col < 0) return fail(1, "header lacks a 'node' or 'speed' column");
  speeds->clear();
  while (next_line()) {
    if (too_long()) return fail(lineno, "line longer than " + std::to_string(kMaxCsvLineBytes) + " bytes");
    if (line.empty() || line == "\r") continue;
    auto cells = split_csv(line);
    if (static_cast<int>(cells.size()) <= std::max(node_col, speed_col))
      return fail(lineno, "expected " + std::to_string(header.size()) + " columns");
    const std::string& s = cells[speed_col];
    double v = 0;
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v, std::chars_format::general);
    if (s.empty() || ec != std::errc() || p != s.data() + s.size() || !(v >= kMinSpeed && v <= kMaxSpeed))
      return fail(lineno, fmt_range("speed", s));
    (*speeds)[cells[node_col]] = v;
  }
  if (speeds->empty()) return fail(lineno, "no nodes listed");
  return true;
}

bool read_node_speeds(const std::string& csv_path, std::map<std::string, double>* speeds, std::string* error) {
  if (csv_path.empty()) {
    if (error) *error = ":0: NodeSpeedsFile not set";
    return false;
  }
  std::string text;
  try {
    text = read_regular_file(csv_path, kMaxNodeSpeedsBytes, "node speeds CSV");
  } catch (const FileError& e) {
    if (error) *error = e.what();
    return false;
  }
  return parse_node_speeds(text, csv_path, speeds, error);
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
