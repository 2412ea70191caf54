#include "replay/slurm_nodes.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <ostream>

#include <fmt/format.h>

#include "policy/io/csv.h"
#include "policy/io/limits.h"

namespace duet::replay {

namespace {

struct Word {
  std::string key, value;
  int column = 0;
};

bool starts_key(const std::string& line, size_t b) {
  size_t i = b;
  if (i >= line.size() || !(std::isalpha(static_cast<unsigned char>(line[i])) || line[i] == '_')) return false;
  while (i < line.size() && (std::isalnum(static_cast<unsigned char>(line[i])) || line[i] == '_')) ++i;
  return i < line.size() && line[i] == '=';
}

// KEY=VALUE words; a word that does not start with KEY= continues the value
// before it ("OS=Linux 6.1.0 #1 SMP").
std::vector<Word> split_words(const std::string& line) {
  std::vector<Word> w;
  size_t b = 0;
  while (b < line.size()) {
    while (b < line.size() && line[b] == ' ') ++b;
    if (b >= line.size()) break;
    size_t e = line.find(' ', b);
    if (e == std::string::npos) e = line.size();
    if (starts_key(line, b)) {
      size_t eq = line.find('=', b);
      w.push_back({line.substr(b, eq - b), line.substr(eq + 1, e - eq - 1), static_cast<int>(b) + 1});
    } else if (!w.empty()) {
      w.back().value += " " + line.substr(b, e - b);
    } else {
      w.push_back({"", line.substr(b, e - b), static_cast<int>(b) + 1});
    }
    b = e;
  }
  return w;
}

int64_t number(const Word& w, const std::string& name, int line, int64_t max) {
  char* end = nullptr;
  long long v = std::strtoll(w.value.c_str(), &end, 10);
  if (w.value.empty() || *end || v < 0 || v > max)
    throw InputError(name, line, w.column,
                     fmt::format("{}: expected an integer from 0 to {}, got '{}'", w.key, max, w.value));
  return v;
}

// "gpu:v100:4(S:0-1),gpu:t4:2,mps:100" -> {v100: 4, t4: 2}
void parse_gres(const Word& w, SlurmNode& n, const std::string& name, int line) {
  if (w.value == "(null)" || w.value.empty()) return;
  std::vector<std::string> items;
  int depth = 0;
  std::string cur;
  for (char c : w.value) {
    if (c == '(') ++depth;
    if (c == ')') --depth;
    if (c == ',' && depth == 0) {
      items.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  items.push_back(cur);
  for (std::string item : items) {
    item = item.substr(0, item.find('('));
    std::vector<std::string> parts;
    size_t b = 0;
    for (;;) {
      size_t e = item.find(':', b);
      parts.push_back(item.substr(b, e == std::string::npos ? std::string::npos : e - b));
      if (e == std::string::npos) break;
      b = e + 1;
    }
    if (parts[0] != "gpu") continue;
    if (parts.size() != 3 || parts[1].empty())
      throw InputError(
          name, line, w.column,
          "Gres: expected gpu:TYPE:COUNT (duet needs each node's GPU type: gres.conf Type=), got '" + item + "'");
    if (!plain_name_ok(parts[1]))
      throw InputError(name, line, w.column,
                       std::string("Gres: expected a GPU type of ") + kPlainNameRule + ", got '" + parts[1] + "'");
    char* end = nullptr;
    long v = std::strtol(parts[2].c_str(), &end, 10);
    if (parts[2].empty() || *end || v < 0 || v > 1024)
      throw InputError(name, line, w.column, "Gres: expected a GPU count from 0 to 1024 in '" + item + "'");
    if (v > 0) {
      int& typed = n.gpus_by_type[parts[1]];
      if (typed + v > kMaxMachineGpus)
        throw InputError(name, line, w.column,
                         "Gres: more than " + std::to_string(kMaxMachineGpus) + " GPUs of type " + parts[1]);
      typed += static_cast<int>(v);
    }
  }
}

std::vector<std::string> split_features(const std::string& v) {
  std::vector<std::string> out;
  if (v == "(null)" || v.empty()) return out;
  size_t b = 0;
  for (;;) {
    size_t e = v.find(',', b);
    out.push_back(v.substr(b, e == std::string::npos ? std::string::npos : e - b));
    if (e == std::string::npos) break;
    b = e + 1;
  }
  return out;
}

std::string upper(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

// A feature "speed_0.5": the node's speed factor, when no speeds file says.
bool feature_speed(const SlurmNode& n, const std::string& name, double& out) {
  for (const std::string& f : n.features) {
    if (f.rfind("speed_", 0) != 0) continue;
    char* end = nullptr;
    double v = std::strtod(f.c_str() + 6, &end);
    if (f.size() == 6 || *end || !std::isfinite(v) || v < 0.001 || v > 1000)
      throw InputError(name, n.line, 0, "feature '" + f + "': expected speed_X with X from 0.001 to 1000");
    out = v;
    return true;
  }
  return false;
}

}  // namespace

std::vector<SlurmNode> parse_scontrol_nodes(std::istream& in, const std::string& name) {
  std::vector<SlurmNode> nodes;
  std::string line;
  int lineno = 0;
  while (std::getline(in, line)) {
    ++lineno;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.find_first_not_of(' ') == std::string::npos) continue;
    std::vector<Word> words = split_words(line);
    if (words.empty() || words[0].key != "NodeName")
      throw InputError(name, lineno, words.empty() ? 0 : words[0].column,
                       "expected a line starting NodeName= (scontrol show nodes --oneliner)");
    SlurmNode n;
    n.name = words[0].value;
    n.line = lineno;
    // ':' joins a node's name and type when it has two (cluster_from_slurm_nodes).
    if (!plain_name_ok(n.name) || n.name.find(':') != std::string::npos)
      throw InputError(name, lineno, words[0].column,
                       std::string("NodeName: expected a host name of ") + kPlainNameRule + " and without ':', got '" +
                           n.name + "'");
    bool features_seen = false;
    for (const Word& w : words) {
      if (w.key == "Gres")
        parse_gres(w, n, name, lineno);
      else if (w.key == "CPUTot")
        n.cpus = static_cast<int>(number(w, name, lineno, 1 << 24));
      else if (w.key == "RealMemory")
        n.memory_mb = number(w, name, lineno, int64_t{1} << 40);
      else if (w.key == "Weight")
        n.weight = number(w, name, lineno, int64_t{1} << 32);
      else if (w.key == "AvailableFeatures" || (w.key == "Features" && !features_seen)) {
        n.features = split_features(w.value);
        features_seen = true;
      }
    }
    for (const SlurmNode& o : nodes)
      if (o.name == n.name) throw InputError(name, lineno, words[0].column, "node '" + n.name + "' listed twice");
    nodes.push_back(std::move(n));
  }
  if (nodes.empty()) throw InputError(name, lineno, 0, "no nodes listed (expected scontrol show nodes --oneliner)");
  return nodes;
}

namespace {

// The slowest of the node's GPU types as opt knows them; false (the
// unknown ones added to `unknown`) when one is not known.
bool type_speed(const SlurmNode& n, const SlurmNodesOptions& opt, double& out, std::vector<std::string>& unknown) {
  double slowest = 0;
  bool known = true;
  for (const auto& [type, count] : n.gpus_by_type) {
    const std::string t = upper(type);
    auto given = opt.type_speeds.find(t);
    auto mean = opt.type_mean_speeds.find(t);
    if (given == opt.type_speeds.end() && mean == opt.type_mean_speeds.end()) {
      known = false;
      if (std::find(unknown.begin(), unknown.end(), t) == unknown.end()) unknown.push_back(t);
      continue;
    }
    const double v = given != opt.type_speeds.end() ? given->second : mean->second;
    slowest = slowest == 0 ? v : std::min(slowest, v);
  }
  if (!known) return false;
  out = slowest;
  return true;
}

}  // namespace

SlurmNodesResult cluster_from_slurm_nodes(const std::vector<SlurmNode>& nodes, const std::string& name,
                                          const SlurmNodesOptions& opt) {
  SlurmNodesResult r;
  r.cluster.source = name;
  std::vector<const SlurmNode*> order;
  for (const SlurmNode& n : nodes) order.push_back(&n);
  std::stable_sort(order.begin(), order.end(),
                   [](const SlurmNode* a, const SlurmNode* b) { return a->weight < b->weight; });
  for (const SlurmNode* n : order) {
    if (n->gpus_by_type.empty()) {
      ++r.cpu_only;
      continue;
    }
    r.cpus += n->cpus;
    r.memory_mb += n->memory_mb;
    double speed = 1;
    if (auto it = opt.speeds.find(n->name); it != opt.speeds.end()) {
      speed = it->second;
      ++r.speeds_given;
    } else if (feature_speed(*n, name, speed)) {
      ++r.speeds_from_features;
    } else if (type_speed(*n, opt, speed, r.unknown_types)) {
      ++r.speeds_from_types;
    }
    const bool split = n->gpus_by_type.size() > 1;
    SlurmNodesResult::NodeSpeed row{n->name, "", 0, speed};
    for (const auto& [type, count] : n->gpus_by_type) {
      MachineSpec m;
      m.name = split ? n->name + ":" + type : n->name;
      m.gpu_type = upper(type);
      m.gpus = count;
      m.rack = split ? n->name : "";
      if (auto it = opt.type_speeds.find(m.gpu_type); it != opt.type_speeds.end()) m.speed = it->second;
      m.line = n->line;
      r.cluster.machines.push_back(m);
      row.gpu_type += (row.gpu_type.empty() ? "" : "|") + m.gpu_type;
      row.gpus += count;
    }
    r.speeds.push_back(row);
  }
  if (r.cluster.machines.empty()) throw InputError(name, 0, 0, "no node has a GPU (Gres=gpu:TYPE:N)");
  return r;
}

void write_node_speeds(std::ostream& out, const SlurmNodesResult& r) {
  out << "node,gpu_type,num_gpus,speed\n";
  for (const auto& s : r.speeds)
    out << csv_escape(s.node) << ',' << s.gpu_type << ',' << s.gpus << ',' << fmt::format("{}", s.speed) << '\n';
}

}  // namespace duet::replay
