#include "replay/emu_nodes.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "policy/io/csv.h"

namespace duet::replay {

std::vector<EmuNode> read_nodes_csv(const std::string& path) {
  auto f = CsvReader::open(path);
  CsvReader r(*f, path);
  CsvHeader h = read_header(r, {"node", "gpu_type", "num_gpus", "speed"}, {"rack"});
  const int cn = h.find("node"), ct = h.find("gpu_type"), cg = h.find("num_gpus"), cs = h.find("speed"),
            cr = h.find("rack");
  std::vector<EmuNode> nodes;
  while (r.next()) {
    r.expect_fields(h.names.size(), h.names.size());
    EmuNode n;
    n.line = r.line();
    n.name = r.text(cn, "node");
    n.gpu_type = r.text(ct, "gpu_type");
    n.gpus = static_cast<int>(r.positive_integer(cg, "num_gpus"));
    n.speed = r.number(cs, "speed");
    if (n.speed <= 0) r.fail(cs, "field 'speed': expected a number > 0");
    if (cr >= 0) n.rack = r.fields()[cr].text;
    if (find_node(nodes, n.name)) r.fail(cn, "node '" + n.name + "' listed twice");
    nodes.push_back(std::move(n));
  }
  if (nodes.empty()) throw InputError(path, r.line(), 0, "no nodes listed");
  return nodes;
}

const EmuNode* find_node(const std::vector<EmuNode>& nodes, const std::string& name) {
  for (const auto& n : nodes)
    if (n.name == name) return &n;
  return nullptr;
}

std::string nodes_csv_from_slurm_conf() {
  const char* c = std::getenv("SLURM_CONF");
  if (!c || !*c) return "";
  namespace fs = std::filesystem;
  fs::path dir = fs::path(c).parent_path();
  for (const fs::path& p : {dir / "nodes.csv", dir.parent_path() / "nodes.csv"})
    if (fs::is_regular_file(p)) return p.string();
  return "";
}

std::vector<std::string> expand_hostlist(const std::string& expr) {
  std::vector<std::string> out;
  auto bad = [&](size_t col, const std::string& what) {
    throw std::invalid_argument("hostlist '" + expr + "' column " + std::to_string(col + 1) + ": " + what);
  };
  size_t i = 0;
  while (i < expr.size()) {
    size_t b = i;
    while (i < expr.size() && expr[i] != ',' && expr[i] != '[') ++i;
    std::string prefix = expr.substr(b, i - b);
    if (i < expr.size() && expr[i] == '[') {
      size_t close = expr.find(']', i);
      if (close == std::string::npos) bad(i, "'[' without ']'");
      size_t after = close + 1;
      while (after < expr.size() && expr[after] != ',') ++after;
      std::string suffix = expr.substr(close + 1, after - close - 1);
      if (suffix.find_first_of("[]") != std::string::npos) bad(close + 1, "one bracket range per name expected");
      size_t k = i + 1;
      while (k < close) {
        size_t e = expr.find(',', k);
        if (e == std::string::npos || e > close) e = close;
        std::string r = expr.substr(k, e - k);
        size_t dash = r.find('-');
        std::string lo = r.substr(0, dash), hi = dash == std::string::npos ? lo : r.substr(dash + 1);
        if (lo.empty() || hi.empty() || lo.find_first_not_of("0123456789") != std::string::npos ||
            hi.find_first_not_of("0123456789") != std::string::npos)
          bad(k, "expected N or N-M inside brackets");
        long a = std::stol(lo), z = std::stol(hi);
        if (z < a || z - a > 100000) bad(k, "range end before its start or too long");
        for (long v = a; v <= z; ++v) {
          std::string num = std::to_string(v);
          if (num.size() < lo.size()) num.insert(0, lo.size() - num.size(), '0');  // node[01-10]
          out.push_back(prefix + num + suffix);
        }
        k = e + 1;
      }
      i = after;
    } else if (!prefix.empty()) {
      out.push_back(prefix);
    } else if (i < expr.size()) {
      bad(i, "empty host name");
    }
    if (i < expr.size() && expr[i] == ',') {
      ++i;
      if (i == expr.size()) bad(i - 1, "trailing ','");
    }
  }
  return out;
}

}  // namespace duet::replay
