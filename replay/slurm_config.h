// The cluster's scheduling plugins, read from `scontrol show config`, so a
// run's report names the plugins it ran with (recorded when it was replayed),
// not whatever the cluster runs when the report is written.
#pragma once

#include <map>
#include <string>

namespace duet::replay {

// KEY's value in `scontrol show config` output ("" if absent).
std::string slurm_config_value(const std::string& text, const std::string& key);

// {"priority", PriorityType}, {"select", SelectType} and, when one is set,
// {"site_factor", PrioritySiteFactorPlugin}; empty when scontrol fails.
std::map<std::string, std::string> slurm_scheduling_plugins();

// "priority/multifactor+site_factor/duet/select/cons_tres" from those keys
// ("" when priority or select is missing): ORDER/PLACE as duet report names runs.
std::string scheduling_label(const std::map<std::string, std::string>& plugins);

}  // namespace duet::replay
