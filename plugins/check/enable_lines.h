// The slurm.conf lines `duet-admin enable` writes (contrib/duet-admin,
// enabled_conf), laid over a slurm.conf read before the switch, so that
// `duet check-config --pending` checks the setup the switch will make.
// Keep the two in step: tests/integration/admin_check.sh runs the check
// before `duet-admin enable` and after it.
#pragma once

#include <string>

#include "plugins/check/slurm_conf_file.h"

namespace duet::plugin {

enum class EnableMode { site_factor, priority };

// "site-factor" or "priority" (duet-admin's --mode); false for anything else.
bool parse_enable_mode(const std::string& s, EnableMode* out);
const char* enable_mode_name(EnableMode m);

// Sets the keys duet-admin owns as enable sets them: SelectType=select/duet
// and, for site-factor, PriorityType=priority/multifactor,
// PrioritySiteFactorPlugin=site_factor/duet and PrioritySiteFactorParameters
// kept when it has a weight (else weight=10000); for priority,
// PriorityType=priority/duet with the site factor keys set aside. A line
// written is placed at line 0 of `conf->path`; a kept one keeps its place.
void apply_enable_lines(EnableMode mode, SlurmConfFile* conf);

}  // namespace duet::plugin
