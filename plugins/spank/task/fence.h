// `vmha-task fence DIR NODE`: the backup's fencing command (vmha(1),
// --fence-cmd). A backup may resume the program only once the primary is
// known to run nothing any more.
#pragma once

#include <string>

namespace vmha_task {

// 0 when the primary is known gone, else 1:
//  - vmha-task marked it (DIR/primary.gone): the primary was killed alone
//    and its supervisor saw it; waited for up to `mark_wait_ms`;
//  - or Slurm has NODE down. A node that died with the primary is declared
//    DOWN only after SlurmdTimeout and a ping round, so this is polled for as
//    long as Slurm may take (about 2 x SlurmdTimeout + MessageTimeout); a
//    node Slurm still hears from by then keeps its primary (1: no takeover).
// Progress and the verdict go to stderr (the backup's log).
int fence(const std::string& dir, const std::string& node, int mark_wait_ms);

// How long, in seconds, Slurm may take to declare a dead node DOWN, from
// `scontrol show config` output; 0 when it never does (SlurmdTimeout=0) or
// the output lacks SlurmdTimeout. Exposed for the unit test.
int down_wait_s(const std::string& show_config);

// Whether an `scontrol show node -o` line says the node runs nothing: its
// state is DOWN or POWERED_DOWN (any flags). Exposed for the unit test.
bool node_is_down(const std::string& show_node);

}  // namespace vmha_task
