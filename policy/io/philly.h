// Reader for the Philly job trace as redistributed with the Sia artifact:
// header "timestamp,duration,num_gpus,gpu_time,cluster", one job a row,
// timestamp "YYYY-MM-DD HH:MM:SS" (UTC). Converted to a duet trace:
// submit = timestamp - earliest timestamp, vc = cluster, job_id = data row
// number (1 = first row after the header); jobs sorted by submit (stable).
#pragma once

#include <string>

#include "policy/io/trace.h"

namespace duet {

Trace read_philly(const std::string& path);
// Seconds since 1970-01-01 for "YYYY-MM-DD HH:MM:SS"; false if malformed.
bool parse_timestamp(const std::string& s, int64_t& out);

}  // namespace duet
