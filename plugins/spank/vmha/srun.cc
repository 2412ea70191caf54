// srun (local context): check the request before the step (or the job) is
// created. A backup step started by vmha-task is left alone.
#include <cstdlib>

#include "plugins/spank/vmha/contexts.h"
#include "plugins/spank/vmha/submit.h"

namespace vmha_spank {

int srun_init_post_opt(spank_t /*sp*/) {
  if (std::getenv(kEnvRole)) return 0;
  HaRequest req;
  if (request_from_command(&req) != 0) return -1;
  return check_and_export(req, "srun");
}

}  // namespace vmha_spank
