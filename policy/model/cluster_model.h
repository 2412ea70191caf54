// A cluster resolved against the throughput table: GPU type and rack ids,
// each machine's type speed. Built from a ClusterSpec (policy/io/cluster.h).
#pragma once

#include <string>
#include <vector>

#include "policy/io/cluster.h"
#include "policy/model/throughput.h"

namespace duet {

struct Machine {
  std::string name;
  int type = 0;  // index into ClusterModel::gpu_types
  int gpus = 0;
  int rack = 0;  // index into ClusterModel::racks
};

struct GpuType {
  std::string name;        // as written in the cluster file
  int table_gpu = -1;      // index in the throughput table, -1 = flat speed
  double flat_speed = -1;  // speed for every job type when table_gpu < 0
  double mean_speed = 1;   // geometric mean over job types (what a policy "knows")
};

struct ClusterModel {
  std::string source;
  std::vector<GpuType> gpu_types;  // at most kMaxGpuTypes (policy/io/limits.h)
  std::vector<std::string> racks;
  std::vector<Machine> machines;
  int total_gpus = 0;

  int find_type(std::string_view name) const;  // exact, then case-insensitive; -1
};

// Throws InputError (cluster file and line) for a type the table lacks
// without a `speed`, or a type whose machines disagree on `speed`.
ClusterModel build_cluster(const ClusterSpec& spec, const ThroughputTable& table);

}  // namespace duet
