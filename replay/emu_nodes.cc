#include "replay/emu_nodes.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "policy/io/csv.h"
#include "policy/util/hostlist.h"

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
  std::string error;
  if (!duet::expand_hostlist(expr, &out, &error)) throw std::invalid_argument("hostlist '" + expr + "' " + error);
  return out;
}

}  // namespace duet::replay
