// Per-GPU-type price and power (etc/gpu-prices.csv, see duet-prices(5)):
// header gpu_type,usd_per_gpu_hour,watts[,source]; a row `default` covers
// types not listed. Matching is case-insensitive.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace duet {

struct GpuPrice {
  std::string gpu_type;
  double usd_per_gpu_hour = 0;
  double watts = 0;
};

class PriceTable {
 public:
  static PriceTable read(const std::string& path);
  // The row for `type`, else `default`; throws std::invalid_argument if neither.
  const GpuPrice& lookup(std::string_view type) const;
  const std::vector<GpuPrice>& rows() const { return rows_; }
  void add(GpuPrice p) { rows_.push_back(std::move(p)); }

 private:
  std::vector<GpuPrice> rows_;
};

}  // namespace duet
