// Reader for Gavel's measured throughputs (simulation_throughputs.json):
// {"v100": {"('ResNet-50 (batch size 32)', 1)": {"null": tp, "('Other', 1)": [tp, tp_other]}},
//  "v100_unconsolidated": {...}, ...}. Steps/s alone ("null") and co-located.
#pragma once

#include <cstdint>
#include <string>

#include "policy/model/throughput.h"

namespace duet {

// The largest table read (64 MiB; Gavel's is 1.2 MB).
inline constexpr std::uint64_t kMaxGavelJsonBytes = std::uint64_t{64} << 20;

// Throws InputError (file, line, column of a JSON syntax error; the key path
// for a wrong structure). Needs the reference type "v100".
ThroughputTable read_gavel(const std::string& path);

// Splits "('Name', 4)" into name and scale; false if the key is not of that form.
bool parse_gavel_key(const std::string& key, std::string& name, int& scale);

}  // namespace duet
