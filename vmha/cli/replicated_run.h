// `vmha run --backup ADDR --key FILE [--mode async|stop-copy] [--epoch-ms N]`.
#pragma once
#include "vmha/cli/run_command.h"

namespace vmha {

int run_replicated(const RunCommandOptions& opts);

}  // namespace vmha
