// What a job may tell duet in its --comment: "duet:ref=SECONDS;type=NAME".
//   ref   its run time, in wall seconds, alone on one reference-speed machine
//         (as the submitter claims it; `duet replay` sets it from the trace).
//   type  the job's kind, e.g. a Gavel job type "ResNet-50 (batch size 32)"
//         (the learned agents' job-type vocabulary; always last, it may hold
//         any character but newline).
// Anything else in the comment is ignored; a comment not starting with
// "duet:" gives no hints. Untrusted: the user writes them, so they may
// steer that job's own ranking (its type's speeds and features) but never
// what slurmctld learns for everyone (issue 52: select/duet's node speeds
// learn from measured run times only, placement_model.cc).
#pragma once

#include <string>
#include <string_view>

namespace duet::plugin {

struct JobHints {
  double ref_s = -1;  // < 0: unknown
  std::string type;   // "": unknown
};

JobHints parse_job_hints(std::string_view comment);

// The comment `duet replay` writes (inverse of parse_job_hints).
std::string format_job_hints(double ref_s, const std::string& type);

}  // namespace duet::plugin
