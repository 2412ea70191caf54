// vmha's Status is the one of the replication seams (vmha/protocol/status.h),
// so the VMM and the replication layer share a single error type.
#pragma once
#include <string>

#include "vmha/protocol/status.h"

namespace vmha {

// Error text for a failed host call: "what: strerror(errno)".
std::string errno_text(const std::string& what);

}  // namespace vmha
