// The job's explanation, kept in its SystemComment (`scontrol show job`,
// sacct --format=SystemComment): "duet: score S at submit by SCORER", then
// "duet: rank R/N score S by SCORER" at each re-score while pending, then "; nodes LIST: REASON" once started. duet
// never overwrites a SystemComment that it did not write (one not starting with "duet:").
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace duet::plugin {

inline constexpr std::string_view kExplainPrefix = "duet:";

bool explain_owned(const char* system_comment);  // NULL, "" or "duet:..."

// rank 0 = not ranked yet ("duet: score S at submit by SCORER").
std::string explain_rank(size_t rank, size_t count, double score, const std::string& scorer);

// `current` with its placement part replaced by the given nodes and reason.
std::string explain_placement(const char* current, const std::vector<std::string>& nodes, const std::string& reason);

}  // namespace duet::plugin
