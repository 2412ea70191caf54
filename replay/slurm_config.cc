#include "replay/slurm_config.h"

#include <sstream>

#include "replay/run_command.h"

namespace duet::replay {

std::string slurm_config_value(const std::string& text, const std::string& key) {
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    size_t b = line.find_first_not_of(' ');
    if (b == std::string::npos || line.compare(b, key.size(), key) != 0) continue;
    size_t eq = line.find('=', b);
    if (eq == std::string::npos || line.find_first_not_of(' ', b + key.size()) != eq) continue;
    size_t v = line.find_first_not_of(' ', eq + 1);
    return v == std::string::npos ? "" : line.substr(v);
  }
  return "";
}

std::map<std::string, std::string> slurm_scheduling_plugins() {
  CommandResult sc = run_command({"scontrol", "show", "config"}, 20);
  if (sc.status != 0) return {};
  std::map<std::string, std::string> p = {{"priority", slurm_config_value(sc.out, "PriorityType")},
                                          {"select", slurm_config_value(sc.out, "SelectType")}};
  std::string site = slurm_config_value(sc.out, "PrioritySiteFactorPlugin");
  if (!site.empty() && site != "(null)" && site != "site_factor/none") p["site_factor"] = site;
  return p;
}

std::string scheduling_label(const std::map<std::string, std::string>& plugins) {
  auto pr = plugins.find("priority"), se = plugins.find("select");
  if (pr == plugins.end() || se == plugins.end() || pr->second.empty() || se->second.empty()) return "";
  std::string order = pr->second;
  if (auto sf = plugins.find("site_factor"); sf != plugins.end() && !sf->second.empty()) order += "+" + sf->second;
  return order + "/" + se->second;
}

}  // namespace duet::replay
