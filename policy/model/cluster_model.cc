#include "policy/model/cluster_model.h"

#include <cmath>
#include <map>

#include <fmt/format.h>

#include "policy/io/csv.h"
#include "policy/io/limits.h"
#include "policy/util/text.h"

namespace duet {

int ClusterModel::find_type(std::string_view name) const {
  for (size_t i = 0; i < gpu_types.size(); ++i)
    if (gpu_types[i].name == name) return static_cast<int>(i);
  for (size_t i = 0; i < gpu_types.size(); ++i)
    if (iequal(gpu_types[i].name, name)) return static_cast<int>(i);
  return -1;
}

ClusterModel build_cluster(const ClusterSpec& spec, const ThroughputTable& table) {
  ClusterModel c;
  c.source = spec.source;
  std::map<std::string, int> rack_ids;
  std::vector<int> type_line;
  for (const MachineSpec& ms : spec.machines) {
    int t = -1;
    for (size_t i = 0; i < c.gpu_types.size(); ++i)
      if (c.gpu_types[i].name == ms.gpu_type) t = static_cast<int>(i);
    if (t < 0) {
      GpuType g;
      g.name = ms.gpu_type;
      g.flat_speed = ms.speed;
      g.table_gpu = ms.speed > 0 ? -1 : table.find_gpu(ms.gpu_type);
      if (g.table_gpu < 0 && ms.speed <= 0) {
        std::string known;
        for (auto& k : table.gpu_types()) known += (known.empty() ? "" : ", ") + k;
        throw InputError(
            spec.source, ms.line, 0,
            fmt::format("GPU type '{}' is not in the throughput table (known: {}); give its 'speed' column",
                        ms.gpu_type, known));
      }
      if (c.gpu_types.size() >= kMaxGpuTypes)
        throw InputError(spec.source, ms.line, 0, fmt::format("more than {} GPU types in one cluster", kMaxGpuTypes));
      g.mean_speed = g.table_gpu >= 0 ? gpu_type_mean_speed(table, g.table_gpu) : g.flat_speed;
      t = static_cast<int>(c.gpu_types.size());
      c.gpu_types.push_back(g);
      type_line.push_back(ms.line);
    } else if (c.gpu_types[t].flat_speed != ms.speed) {
      throw InputError(spec.source, ms.line, 0,
                       fmt::format("machine '{}': speed differs from other {} machines (line {}); a type has one speed",
                                   ms.name, ms.gpu_type, type_line[t]));
    }
    Machine m;
    m.name = ms.name;
    m.type = t;
    m.gpus = ms.gpus;
    std::string rack = ms.rack.empty() ? "~" + ms.name : ms.rack;  // no rack: its own
    auto [it, fresh] = rack_ids.emplace(rack, static_cast<int>(c.racks.size()));
    if (fresh) c.racks.push_back(rack);
    m.rack = it->second;
    c.total_gpus += m.gpus;
    c.machines.push_back(std::move(m));
  }
  return c;
}

}  // namespace duet
