#include "policy/model/prices.h"

#include <fstream>
#include <stdexcept>

#include "policy/io/csv.h"
#include "policy/util/text.h"

namespace duet {

PriceTable PriceTable::read(const std::string& path) {
  auto f = CsvReader::open(path);
  CsvReader r(*f, path);
  CsvHeader h = read_header(r, {"gpu_type", "usd_per_gpu_hour", "watts"}, {"source"});
  PriceTable t;
  while (r.next()) {
    r.expect_fields(h.names.size(), h.names.size());
    GpuPrice p;
    p.gpu_type = r.fields()[h.find("gpu_type")].text;
    if (p.gpu_type.empty()) r.fail(h.find("gpu_type"), "field 'gpu_type': expected a GPU type or 'default'");
    for (const auto& q : t.rows_)
      if (iequal(q.gpu_type, p.gpu_type)) r.fail(h.find("gpu_type"), "duplicate gpu_type '" + p.gpu_type + "'");
    p.usd_per_gpu_hour = r.non_negative(h.find("usd_per_gpu_hour"), "usd_per_gpu_hour");
    p.watts = r.non_negative(h.find("watts"), "watts");
    t.rows_.push_back(std::move(p));
  }
  return t;
}

const GpuPrice& PriceTable::lookup(std::string_view type) const {
  for (const auto& p : rows_)
    if (iequal(p.gpu_type, type)) return p;
  for (const auto& p : rows_)
    if (iequal(p.gpu_type, "default")) return p;
  throw std::invalid_argument("no price for GPU type '" + std::string(type) + "' and no 'default' row");
}

}  // namespace duet
