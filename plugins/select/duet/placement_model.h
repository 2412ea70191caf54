// Ranker=model's loader (placement_model.cc), registered with the seam
// (placement_agent.h) when select/duet starts (init()) and by duet
// check-config before its checks.
#pragma once

namespace duet::plugin {

void register_placement_agent();

}  // namespace duet::plugin
