#include "policy/model/variability.h"

#include <algorithm>
#include <cmath>
#include <map>

namespace duet {

static double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static double pstdev(const std::vector<double>& v) {
  if (v.empty()) return 0;
  double m = 0, s = 0;
  for (double x : v) m += x;
  m /= static_cast<double>(v.size());
  for (double x : v) s += (x - m) * (x - m);
  return std::sqrt(s / static_cast<double>(v.size()));
}

Variability fit_variability(const std::vector<MinibatchJob>& jobs) {
  std::vector<double> speed_sd, phis, sds;
  for (const auto& job : jobs) {
    std::map<int, std::vector<std::pair<int, double>>> by_worker;
    for (const auto& s : job.samples) by_worker[s.worker].emplace_back(s.time, s.value);
    std::vector<double> means;
    for (auto& [w, v] : by_worker) {
      std::sort(v.begin(), v.end());
      double m = 0;
      for (auto& p : v) m += p.second;
      means.push_back(m / static_cast<double>(v.size()));
    }
    const double med = median(means);
    std::vector<double> logs;
    for (double m : means) logs.push_back(std::log(med / m));
    speed_sd.push_back(pstdev(logs));
    double num = 0, den = 0;
    std::vector<double> xs_all;
    size_t k = 0;
    for (auto& [w, v] : by_worker) {
      const double m = means[k++];
      std::vector<double> xs;
      for (auto& p : v) xs.push_back(std::log(p.second / m));
      for (size_t i = 0; i + 1 < xs.size(); ++i) num += xs[i] * xs[i + 1], den += xs[i] * xs[i];
      xs_all.insert(xs_all.end(), xs.begin(), xs.end());
    }
    phis.push_back(den > 0 ? num / den : 0);
    sds.push_back(pstdev(xs_all));
  }
  return Variability{median(speed_sd), median(phis), median(sds)};
}

}  // namespace duet
