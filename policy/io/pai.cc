#include "policy/io/pai.h"

#include <fmt/format.h>

#include <cmath>
#include <istream>
#include <stdexcept>
#include <vector>
#include <map>
#include <unordered_map>

#include "policy/io/csv.h"
#include "policy/io/limits.h"
#include "policy/util/rng.h"

namespace duet {

double pai_type_speed(std::string_view t) {
  // V100M32: the same V100 chip with 32 GB memory.
  if (t == "V100M32") return 1.0;
  // T4: ratio of peak FP32 throughput, 8.1 / 15.7 TFLOPS (NVIDIA T4 and
  // V100 SXM2 datasheets).
  if (t == "T4") return 0.52;
  // MISC: older mixed GPU models (PAI, NSDI'22); assumed half a V100.
  if (t == "MISC") return 0.5;
  return -1;
}

PaiResult read_pai(const std::string& path) {
  auto f = CsvReader::open(path);
  return read_pai(*f, path);
}

PaiResult read_pai(std::istream& in, const std::string& path) {
  CsvReader r(in, path);
  PaiResult res;
  std::unordered_map<std::string, int> seen;
  std::map<std::string, int> per_type;
  while (r.next()) {
    r.expect_fields(5, 5);
    MachineSpec m;
    m.line = r.line();
    m.name = r.fields()[0].text;
    if (m.name.empty()) r.fail(0, "field 'machine': expected a machine id, got an empty field");
    if (auto [it, fresh] = seen.emplace(m.name, m.line); !fresh)
      r.fail(0, fmt::format("duplicate machine '{}' (first on line {})", m.name, it->second));
    m.gpu_type = r.fields()[1].text;
    if (m.gpu_type.empty() || m.gpu_type.find_first_of("| \t") != std::string::npos)
      r.fail(1, "field 'gpu_type': expected a GPU type name, got '" + m.gpu_type + "'");
    r.non_negative(2, "cap_cpu");
    r.non_negative(3, "cap_mem");
    int64_t g = r.integer(4, "cap_gpu");
    if (g < 0 || g > kMaxMachineGpus)
      r.fail(4, fmt::format("field 'cap_gpu': expected an integer from 0 to {}", kMaxMachineGpus));
    if (g == 0) {
      ++res.cpu_only_machines;
      continue;
    }
    m.gpus = static_cast<int>(g);
    if (!per_type.count(m.gpu_type) && per_type.size() >= kMaxGpuTypes)
      r.fail(1, fmt::format("GPU type '{}' is one more than the {} GPU types a duet cluster may have "
                            "(duet-cluster(5)); leave some machines out or merge types",
                            m.gpu_type, kMaxGpuTypes));
    int k = per_type[m.gpu_type]++;
    m.rack = fmt::format("{}-r{:03}", m.gpu_type, k / kPaiRackSize);
    m.speed = pai_type_speed(m.gpu_type);
    res.cluster.machines.push_back(std::move(m));
  }
  if (res.cluster.machines.empty()) throw InputError(path, r.line(), 0, "no GPU machines in the PAI machine list");
  res.cluster.source = path;
  return res;
}

ClusterSpec sample_cluster(const ClusterSpec& c, double fraction, uint64_t seed) {
  if (!(fraction > 0 && fraction <= 1)) throw std::invalid_argument("sample fraction must be in (0, 1]");
  std::map<std::string, std::vector<size_t>> by_type;
  for (size_t i = 0; i < c.machines.size(); ++i) by_type[c.machines[i].gpu_type].push_back(i);
  std::vector<char> keep(c.machines.size(), 0);
  uint64_t ordinal = 0;  // types in name order (std::map): a stable stream per type
  for (auto& [type, idx] : by_type) {
    Rng rng(mix_seed(seed, 0x73616d706c65ULL /* "sample" */, ordinal++));
    for (size_t i = idx.size(); i > 1; --i) std::swap(idx[i - 1], idx[rng.below(i)]);
    size_t n = std::max<size_t>(1, static_cast<size_t>(std::llround(fraction * static_cast<double>(idx.size()))));
    for (size_t k = 0; k < n && k < idx.size(); ++k) keep[idx[k]] = 1;
  }
  ClusterSpec out;
  out.source = c.source;
  for (size_t i = 0; i < c.machines.size(); ++i)
    if (keep[i]) out.machines.push_back(c.machines[i]);
  return out;
}

}  // namespace duet
