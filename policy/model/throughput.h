// Per-job-type throughput of GPU types, relative to the reference type (V100),
// with co-location and spread (unconsolidated) factors. Filled from Gavel's
// measured table (policy/model/gavel.h).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "policy/core/job_type_speeds.h"

namespace duet {

class ThroughputTable {
 public:
  static constexpr int kScales = 4;  // 1, 2, 4, 8 GPUs
  static int scale_index(int gpus);  // largest of 1,2,4,8 <= gpus -> 0..3

  // GPU types known to the table, lower case ("k80", "p100", "v100").
  const std::vector<std::string>& gpu_types() const { return gpus_; }
  int find_gpu(std::string_view name) const;  // case-insensitive; -1 if unknown
  int reference_gpu() const { return ref_; }

  // Job types (Gavel model + batch size, e.g. "ResNet-50 (batch size 32)").
  int job_types() const { return static_cast<int>(names_.size()); }
  const std::string& job_type_name(int jt) const { return names_[jt]; }
  int find_job_type(std::string_view name) const;  // -1 if unknown
  // Job types measured at this scale index (1 GPU: all of them).
  const std::vector<int>& job_types_at_scale(int scale_idx) const { return at_scale_[scale_idx]; }

  // Throughput alone on one GPU of type `gpu` / alone on the reference type.
  double speed_ratio(int jt, int gpu) const;
  // Throughput of jt sharing a GPU with `other` / jt alone (0..1).
  double colocation(int jt, int other, int gpu) const;
  // Throughput spread over machines / consolidated on one, at scale index s >= 1 (<= 1).
  double spread_factor(int jt, int scale_idx, int gpu) const;

  // Building (used by the reader).
  void set_gpu_types(std::vector<std::string> lower_names, int reference);
  void set_job_types(std::vector<std::string> names);  // after set_gpu_types; ids in this order
  void set_alone(int jt, int gpu, double tp);
  void set_pair(int jt, int other, int gpu, double tp);
  void set_scaled(int jt, int scale_idx, int gpu, double consolidated, double unconsolidated);
  void finish();  // computes derived tables; call after filling

 private:
  std::vector<std::string> gpus_;
  int ref_ = 0;
  std::vector<std::string> names_;
  std::vector<double> alone_;          // [jt * G + g]
  std::vector<double> pair_;           // [(jt * J + other) * G + g], -1 = not measured
  std::vector<double> cons_, uncons_;  // [(jt * kScales + s) * G + g], -1 = not measured
  std::vector<int> at_scale_[kScales];
  size_t G() const { return gpus_.size(); }
  size_t J() const { return names_.size(); }
  void grow();
};

// What a scheduler may know of GPU type `gpu` (a table index): the
// geometric mean over job types of its speed relative to the reference.
double gpu_type_mean_speed(const ThroughputTable& table, int gpu);

// Each job type's speed on each of the table's GPU types over the type's
// geometric mean across job types (the mean a machine's known speed carries,
// cluster_model.h).
JobTypeSpeeds job_type_speeds(const ThroughputTable& table);

}  // namespace duet
