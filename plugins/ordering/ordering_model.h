// Scorer=model's loader (ordering_model.cc), registered with the seam
// (order_scorer.h) by whoever hosts the ordering agent, when it starts:
// OrderingHost::plugin_init in slurmctld, duet check-config before its checks.
#pragma once

namespace duet::plugin {

void register_ordering_agent();

}  // namespace duet::plugin
