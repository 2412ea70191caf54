#include "policy/io/philly.h"

#include <algorithm>
#include <cmath>
#include <istream>

#include <fmt/format.h>

#include "policy/io/csv.h"
#include "policy/io/limits.h"

namespace duet {

// Days from 1970-01-01 to y-m-d in the proleptic Gregorian calendar (H. Hinnant).
static int64_t days_from_civil(int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const unsigned yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<int64_t>(doe) - 719468;
}

bool parse_timestamp(const std::string& s, int64_t& out) {
  // Exactly YYYY-MM-DD HH:MM:SS
  if (s.size() != 19 || s[4] != '-' || s[7] != '-' || s[10] != ' ' || s[13] != ':' || s[16] != ':') return false;
  auto num = [&](size_t at, size_t n, int& v) {
    v = 0;
    for (size_t i = at; i < at + n; ++i) {
      if (s[i] < '0' || s[i] > '9') return false;
      v = v * 10 + (s[i] - '0');
    }
    return true;
  };
  int y, mo, d, h, mi, se;
  if (!num(0, 4, y) || !num(5, 2, mo) || !num(8, 2, d) || !num(11, 2, h) || !num(14, 2, mi) || !num(17, 2, se))
    return false;
  static const int mdays[] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  if (mo < 1 || mo > 12 || d < 1 || d > mdays[mo - 1] || h > 23 || mi > 59 || se > 60) return false;
  out = days_from_civil(y, static_cast<unsigned>(mo), static_cast<unsigned>(d)) * 86400 + h * 3600 + mi * 60 + se;
  return true;
}

Trace read_philly(const std::string& path, const TimeWindow& window) {
  auto f = CsvReader::open(path);
  return read_philly(*f, path, window);
}

Trace read_philly(std::istream& in, const std::string& path, const TimeWindow& window) {
  CsvReader r(in, path);
  CsvHeader h = read_header(r, {"timestamp", "duration", "num_gpus", "gpu_time", "cluster"}, {});
  const int c_ts = h.find("timestamp"), c_d = h.find("duration"), c_g = h.find("num_gpus"), c_gt = h.find("gpu_time"),
            c_c = h.find("cluster");
  struct Row {
    int64_t ts;
    JobSpec j;
  };
  std::vector<Row> rows;
  int64_t n = 0;
  while (r.next()) {
    r.expect_fields(5, 5);
    Row row;
    if (!parse_timestamp(r.fields()[c_ts].text, row.ts))
      r.fail(c_ts, "field 'timestamp': expected 'YYYY-MM-DD HH:MM:SS', got '" + r.fields()[c_ts].text + "'");
    row.j.id = ++n;
    row.j.line = r.line();
    row.j.duration = r.seconds(c_d, "duration");
    int64_t g = r.positive_integer(c_g, "num_gpus");
    if (g > kMaxJobGpus) r.fail(c_g, fmt::format("field 'num_gpus': expected at most {}", kMaxJobGpus));
    row.j.gpus = static_cast<int>(g);
    r.non_negative(c_gt, "gpu_time");
    row.j.vc = r.fields()[c_c].text;
    if (row.j.vc.empty()) r.fail(c_c, "field 'cluster': expected a virtual-cluster id, got an empty field");
    if (row.ts < window.from || row.ts >= window.to) continue;
    rows.push_back(std::move(row));
  }
  if (rows.empty())
    throw InputError(path, r.line(), 0,
                     window.whole() ? "no jobs in the Philly trace" : "no jobs in the Philly trace in the time window");
  std::stable_sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) { return a.ts < b.ts; });
  const int64_t t0 = window.from != INT64_MIN ? window.from : rows.front().ts;
  Trace t;
  t.source = path;
  t.jobs.reserve(rows.size());
  for (auto& row : rows) {
    // The same limit as a duet trace's submit column: a wider span would be
    // refused when the converted trace is read.
    if (row.ts - t0 > static_cast<int64_t>(kMaxTraceSeconds))
      throw InputError(path, row.j.line, c_ts + 1,
                       fmt::format("job submitted {} s after the start, more than {} s (10 years)", row.ts - t0,
                                   static_cast<int64_t>(kMaxTraceSeconds)));
    row.j.submit = static_cast<double>(row.ts - t0);
    t.jobs.push_back(std::move(row.j));
  }
  return t;
}

}  // namespace duet
