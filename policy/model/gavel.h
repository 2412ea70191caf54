// Reader for Gavel's measured throughputs (simulation_throughputs.json):
// {"v100": {"('ResNet-50 (batch size 32)', 1)": {"null": tp, "('Other', 1)": [tp, tp_other]}},
//  "v100_unconsolidated": {...}, ...}. Steps/s alone ("null") and co-located.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "policy/model/throughput.h"

namespace duet {

// The largest table read (64 MiB; Gavel's is 1.2 MB), and the most GPU and
// job types it may name (Gavel's: 3 and 26): the co-location table grows as
// job types squared times GPU types.
inline constexpr std::uint64_t kMaxGavelJsonBytes = std::uint64_t{64} << 20;
inline constexpr std::size_t kMaxGavelGpuTypes = 64, kMaxGavelJobTypes = 256;
// A throughput (steps/s) is 0 (not measured) or within these bounds, so that
// every ratio of two is finite.
inline constexpr double kMinGavelThroughput = 1e-9, kMaxGavelThroughput = 1e9;

// Throws InputError (file, line, column of a JSON syntax error; the key path
// for a wrong structure or a throughput out of bounds). Needs the reference
// type "v100".
ThroughputTable read_gavel(const std::string& path);

// Splits "('Name', 4)" into name and scale; false if the key is not of that form.
bool parse_gavel_key(const std::string& key, std::string& name, int& scale);

}  // namespace duet
