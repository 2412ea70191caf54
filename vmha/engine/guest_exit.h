// Ends vmha the way the guest ended (exit status or fatal signal), for the
// replicated run and the backup's takeover.
#pragma once
#include "vmha/vmm/vm.h"

namespace vmha {

int exit_like_guest(const RunResult& r, const char* who);

}  // namespace vmha
