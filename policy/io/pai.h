// Reader for the Alibaba PAI machine list (cluster-trace-gpu-v2020
// pai_machine_spec.csv): no header, columns machine,gpu_type,cap_cpu,cap_mem,cap_gpu.
//
// Conversion rule (documented in duet-cluster(5)): machines with cap_gpu = 0
// (CPU-only) hold no GPUs and are left out, and counted; racks are synthetic:
// machines of one GPU type, in file order, in groups of kPaiRackSize
// ("P100-r000"). Types the throughput table lacks get a documented speed
// (pai_type_speed()).
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>
#include <string_view>

#include "policy/io/cluster.h"

namespace duet {

inline constexpr int kPaiRackSize = 8;

struct PaiResult {
  ClusterSpec cluster;
  int cpu_only_machines = 0;  // left out (no GPUs)
};

// More than kMaxGpuTypes GPU types (policy/io/limits.h) is an InputError:
// the simulator could not use the converted cluster.
PaiResult read_pai(const std::string& path);
// The same from a stream; `name` is used in messages.
PaiResult read_pai(std::istream& in, const std::string& name);
// A smaller cluster with the same type proportions: of each GPU type keep
// round(fraction x its machines) (at least one), chosen by a seeded shuffle,
// in file order. fraction in (0, 1].
ClusterSpec sample_cluster(const ClusterSpec& c, double fraction, uint64_t seed);
// Speed vs V100 for PAI types outside Gavel's table; < 0 = use the table.
double pai_type_speed(std::string_view gpu_type);

}  // namespace duet
