#include "policy/model/throughput.h"

#include <algorithm>
#include <cmath>

#include "policy/util/text.h"

namespace duet {

int ThroughputTable::scale_index(int gpus) { return gpus >= 8 ? 3 : gpus >= 4 ? 2 : gpus >= 2 ? 1 : 0; }

int ThroughputTable::find_gpu(std::string_view name) const {
  std::string l = lower(name);
  for (size_t i = 0; i < gpus_.size(); ++i)
    if (gpus_[i] == l) return static_cast<int>(i);
  return -1;
}

int ThroughputTable::find_job_type(std::string_view name) const {
  for (size_t i = 0; i < names_.size(); ++i)
    if (names_[i] == name) return static_cast<int>(i);
  return -1;
}

void ThroughputTable::set_gpu_types(std::vector<std::string> lower_names, int reference) {
  gpus_ = std::move(lower_names);
  ref_ = reference;
  names_.clear();
  grow();
}

void ThroughputTable::grow() {
  alone_.assign(J() * G(), 0.0);
  pair_.assign(J() * J() * G(), -1.0);
  cons_.assign(J() * kScales * G(), -1.0);
  uncons_.assign(J() * kScales * G(), -1.0);
}

void ThroughputTable::set_job_types(std::vector<std::string> names) {
  names_ = std::move(names);
  grow();
}

void ThroughputTable::set_alone(int jt, int gpu, double tp) { alone_[jt * G() + gpu] = tp; }
void ThroughputTable::set_pair(int jt, int other, int gpu, double tp) { pair_[(jt * J() + other) * G() + gpu] = tp; }
void ThroughputTable::set_scaled(int jt, int s, int gpu, double c, double u) {
  cons_[(jt * kScales + s) * G() + gpu] = c;
  uncons_[(jt * kScales + s) * G() + gpu] = u;
}

void ThroughputTable::finish() {
  for (auto& v : at_scale_) v.clear();
  for (size_t j = 0; j < J(); ++j) {
    at_scale_[0].push_back(static_cast<int>(j));
    for (int s = 1; s < kScales; ++s)
      if (cons_[(j * kScales + s) * G() + ref_] > 0) at_scale_[s].push_back(static_cast<int>(j));
  }
}

double ThroughputTable::speed_ratio(int jt, int gpu) const {
  double ref = alone_[jt * G() + ref_];
  double v = alone_[jt * G() + gpu];
  return ref > 0 ? v / ref : 1.0;
}

double ThroughputTable::colocation(int jt, int other, int gpu) const {
  double a = alone_[jt * G() + gpu];
  double p = pair_[(jt * J() + other) * G() + gpu];
  if (p < 0) p = pair_[(jt * J() + other) * G() + ref_], a = alone_[jt * G() + ref_];
  if (p < 0 || a <= 0) return 1.0;  // not measured: no interference known
  return std::clamp(p / a, 0.0, 1.0);
}

double ThroughputTable::spread_factor(int jt, int s, int gpu) const {
  if (s <= 0) return 1.0;
  s = std::min(s, kScales - 1);
  for (int g : {gpu, ref_}) {
    double c = cons_[(jt * kScales + s) * G() + g], u = uncons_[(jt * kScales + s) * G() + g];
    if (c > 0 && u > 0) return std::clamp(u / c, 0.05, 1.0);
  }
  return 1.0;  // not measured at this scale: no penalty known
}

double gpu_type_mean_speed(const ThroughputTable& table, int gpu) {
  const int n = table.job_types();
  if (n == 0) return 1.0;
  double lg = 0;
  for (int jt = 0; jt < n; ++jt) lg += std::log(std::max(1e-6, table.speed_ratio(jt, gpu)));
  return std::exp(lg / n);
}

JobTypeSpeeds job_type_speeds(const ThroughputTable& table) {
  JobTypeSpeeds s;
  s.gpu_types = table.gpu_types();
  const int n = table.job_types();
  std::vector<double> mean(s.gpu_types.size(), 1.0);
  for (std::size_t g = 0; g < mean.size(); ++g) mean[g] = gpu_type_mean_speed(table, static_cast<int>(g));
  for (int jt = 0; jt < n; ++jt) {
    std::vector<double>& a = s.affinity[table.job_type_name(jt)];
    for (std::size_t g = 0; g < mean.size(); ++g)
      a.push_back(std::max(1e-6, table.speed_ratio(jt, static_cast<int>(g))) / mean[g]);
  }
  return s;
}

}  // namespace duet
