// Reader for the Philly job trace as redistributed with the Sia artifact:
// header "timestamp,duration,num_gpus,gpu_time,cluster", one job a row,
// timestamp "YYYY-MM-DD HH:MM:SS" (UTC). Converted to a duet trace:
// submit = timestamp - earliest timestamp, vc = cluster, job_id = data row
// number (1 = first row after the header); jobs sorted by submit (stable).
// A window [from, to) (seconds since 1970, UTC) keeps only jobs submitted in
// it and counts submit from `from`: the evaluation splits (duet-eval(1)).
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>

#include "policy/io/trace.h"

namespace duet {

struct TimeWindow {
  int64_t from = INT64_MIN, to = INT64_MAX;
  bool whole() const { return from == INT64_MIN && to == INT64_MAX; }
};
Trace read_philly(const std::string& path, const TimeWindow& window = {});
// The same from a stream; `name` is used in messages.
Trace read_philly(std::istream& in, const std::string& name, const TimeWindow& window = {});
// Seconds since 1970-01-01 for "YYYY-MM-DD HH:MM:SS"; false if malformed.
bool parse_timestamp(const std::string& s, int64_t& out);

}  // namespace duet
