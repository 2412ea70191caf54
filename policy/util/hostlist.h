// Slurm host lists ("node[1-3,7],gpu[08-10]x,r[1-2]n[1-2]") expanded to
// names, in order: what sacct's NodeList, SLURM_JOB_NODELIST and scontrol
// print. One reader for duet convert sacct, duet-emujob and vmha-task.
// Slurm-free; no exceptions, so plugin code can call it as it is.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace duet {

// A list that would expand to more names, or names longer in all, is
// refused: a job's node list names far fewer, and a short hostile list
// ("a[0-99999]b[0-99999]") would otherwise ask for 10^10 names.
inline constexpr std::size_t kMaxHostlistNames = 262'144;
inline constexpr std::size_t kMaxHostlistBytes = 16u << 20;
inline constexpr std::size_t kMaxHostlistGroups = 16;  // bracket groups in one name

// Replaces *hosts with the names; false with *error ("column C: what was
// expected") on a malformed list: an empty name, an unmatched bracket, a
// range that is not N or N-M of decimal digits, runs backwards, spans more
// than 100,000 numbers or has a number of more than 18 digits, a name with
// more than kMaxHostlistGroups bracket groups, or more than the limits above.
bool expand_hostlist(const std::string& list, std::vector<std::string>* hosts, std::string* error);

}  // namespace duet
