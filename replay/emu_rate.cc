#include "replay/emu_rate.h"

#include <algorithm>

namespace duet::replay {

double emulated_rate(const ThroughputTable& table, int jt, int gpus, const std::vector<EmuPart>& parts,
                     const EmuRateOptions& opt) {
  if (parts.empty()) return 1.0;
  double r = 1e300;
  bool cross_rack = false;
  for (const EmuPart& p : parts) {
    const int g = p.table_gpu >= 0 ? p.table_gpu : table.reference_gpu();
    double x = (p.table_gpu >= 0 ? table.speed_ratio(jt, p.table_gpu) : 1.0) * p.speed;
    for (int k : p.others) x *= 1 - opt.interference_beta * (1 - table.colocation(jt, k, g));
    r = std::min(r, x);
    cross_rack |= p.rack.empty() || p.rack != parts[0].rack;
  }
  if (parts.size() > 1) {
    const int g0 = parts[0].table_gpu >= 0 ? parts[0].table_gpu : table.reference_gpu();
    r *= table.spread_factor(jt, ThroughputTable::scale_index(gpus), g0);
    if (cross_rack) r *= opt.cross_rack_factor;
  }
  return std::max(r, 1e-6);
}

}  // namespace duet::replay
