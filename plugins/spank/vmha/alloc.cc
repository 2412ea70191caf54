// sbatch and salloc (allocator context): check the request before submission.
#include <errno.h>  // program_invocation_short_name

#include "plugins/spank/vmha/contexts.h"
#include "plugins/spank/vmha/submit.h"

namespace vmha_spank {

int alloc_init_post_opt(spank_t /*sp*/) {
  HaRequest req;
  if (request_from_command(&req) != 0) return -1;
  return check_and_export(req, program_invocation_short_name);  // sbatch or salloc
}

}  // namespace vmha_spank
