// apply_enable_lines: contrib/duet-admin's enabled_conf, on a parsed slurm.conf.
#include "plugins/check/enable_lines.h"

namespace duet::plugin {

bool parse_enable_mode(const std::string& s, EnableMode* out) {
  if (s == "site-factor") {
    *out = EnableMode::site_factor;
  } else if (s == "priority") {
    *out = EnableMode::priority;
  } else {
    return false;
  }
  return true;
}

const char* enable_mode_name(EnableMode m) { return m == EnableMode::site_factor ? "site-factor" : "priority"; }

void apply_enable_lines(EnableMode mode, SlurmConfFile* conf) {
  auto written = [conf](const char* value) { return SlurmConfSetting{conf->path, 0, value}; };
  auto& s = conf->settings;
  if (mode == EnableMode::site_factor) {
    s["prioritytype"] = written("priority/multifactor");
    s["prioritysitefactorplugin"] = written("site_factor/duet");
    auto params = s.find("prioritysitefactorparameters");
    // (duet-admin keeps a value with a weight, whatever else it says)
    if (params == s.end() || params->second.value.find("weight=") == std::string::npos)
      s["prioritysitefactorparameters"] = written("weight=10000");
  } else {
    s["prioritytype"] = written("priority/duet");
    s.erase("prioritysitefactorplugin");
    s.erase("prioritysitefactorparameters");
  }
  s["selecttype"] = written("select/duet");
}

}  // namespace duet::plugin
