#include "policy/io/cluster.h"

#include <ostream>
#include <unordered_map>
#include <unordered_set>

#include <fmt/format.h>

#include "policy/io/csv.h"
#include "policy/io/limits.h"

namespace duet {

int ClusterSpec::total_gpus() const {
  int n = 0;
  for (const auto& m : machines) n += m.gpus;
  return n;
}

ClusterSpec read_cluster(const std::string& path) {
  auto f = CsvReader::open(path);
  return read_cluster(*f, path);
}

ClusterSpec read_cluster(std::istream& in, const std::string& name) {
  CsvReader r(in, name);
  CsvHeader h = read_header(r, {"machine", "gpu_type", "num_gpus"}, {"rack", "speed"});
  const int c_m = h.find("machine"), c_t = h.find("gpu_type"), c_n = h.find("num_gpus"), c_r = h.find("rack"),
            c_s = h.find("speed");
  ClusterSpec c;
  c.source = name;
  std::unordered_map<std::string, int> seen;
  std::unordered_set<std::string> types;
  while (r.next()) {
    r.expect_fields(h.names.size(), h.names.size());
    MachineSpec m;
    m.line = r.line();
    m.name = r.fields()[c_m].text;
    if (m.name.empty()) r.fail(c_m, "field 'machine': expected a machine name, got an empty field");
    if (auto [it, fresh] = seen.emplace(m.name, m.line); !fresh)
      r.fail(c_m, fmt::format("duplicate machine '{}' (first on line {})", m.name, it->second));
    m.gpu_type = r.fields()[c_t].text;
    if (m.gpu_type.empty() || m.gpu_type.find_first_of("| \t") != std::string::npos)
      r.fail(c_t, "field 'gpu_type': expected a GPU type name without spaces or '|', got '" + m.gpu_type + "'");
    if (types.insert(m.gpu_type).second && types.size() > kMaxGpuTypes)
      r.fail(c_t, fmt::format("GPU type '{}' is one more than the {} GPU types a cluster may have", m.gpu_type,
                              kMaxGpuTypes));
    int64_t g = r.positive_integer(c_n, "num_gpus");
    if (g > kMaxMachineGpus)
      r.fail(c_n, fmt::format("field 'num_gpus': expected at most {} GPUs per machine", kMaxMachineGpus));
    m.gpus = static_cast<int>(g);
    if (c_r >= 0) m.rack = r.fields()[c_r].text;
    if (c_s >= 0 && !r.fields()[c_s].text.empty()) {
      m.speed = r.in_range(c_s, "speed", kMinSpeed, kMaxSpeed, "(relative to V100; empty = from the throughput table)");
    }
    c.machines.push_back(std::move(m));
  }
  if (c.machines.empty()) throw InputError(name, r.line(), 0, "cluster has no machines");
  if (c.machines.size() > 1000000) throw InputError(name, r.line(), 0, "more than 1,000,000 machines");
  return c;
}

void write_cluster(std::ostream& out, const ClusterSpec& c) {
  out << "machine,gpu_type,num_gpus,rack,speed\n";
  for (const auto& m : c.machines) {
    std::string s = m.speed > 0 ? fmt::format("{}", m.speed) : "";
    out << fmt::format("{},{},{},{},{}\n", csv_escape(m.name), m.gpu_type, m.gpus, csv_escape(m.rack), s);
  }
}

}  // namespace duet
