// duet check-config [--conf FILE] [--slurm-conf FILE] [--pending [--mode M]]:
// checks a site's duet setup before slurmctld runs it
// (plugins/check/check_config.h); with --pending, slurm.conf as
// `duet-admin enable` will leave it (before the switch). Prints
// each problem on one line; exit 1 if there is any. Warnings (a setup that
// runs, but not as its keys suggest) are printed as "warning: ..." and do
// not change the exit status.
//
// The checks are the plugins' own (plugins/check, over plugins/seam), so
// this command includes plugins/ headers: tools/duet is a program above
// every library and no library includes it, so no folder loop
// (contrib/check-layers).
#include <cstdlib>
#include <iostream>
#include <memory>
#include <stdexcept>

#include "plugins/check/check_config.h"
#include "plugins/ordering/ordering_model.h"
#include "plugins/seam/duet_conf.h"
#include "plugins/select/duet/placement_model.h"
#include "tools/duet/commands.h"

namespace duet::cli {
namespace {

struct CheckArgs {
  std::string conf, slurm_conf;
  bool pending = false;
  std::string mode = "site-factor";
};

// As slurmctld finds them: slurm.conf from $SLURM_CONF, duet.conf next to it.
std::string default_slurm_conf() {
  const char* env = std::getenv("SLURM_CONF");
  return env && *env ? env : "/etc/slurm/slurm.conf";
}

void check_config(const CheckArgs& a) {
  // the learned agents' loaders, as the plugins register them where they start
  plugin::register_ordering_agent();
  plugin::register_placement_agent();
  plugin::CheckInput in;
  in.slurm_conf = a.slurm_conf.empty() ? default_slurm_conf() : a.slurm_conf;
  in.duet_conf = a.conf.empty() ? plugin::duet_conf_path_for(in.slurm_conf) : a.conf;
  in.duet_conf_required = !a.conf.empty();
  if (a.pending) {
    plugin::EnableMode m;
    if (!plugin::parse_enable_mode(a.mode, &m)) throw std::invalid_argument("--mode: site-factor or priority");
    in.pending = m;
  }
  plugin::CheckResult r = plugin::check_duet_setup(in);
  for (const plugin::CheckProblem& p : r.problems) std::cout << p.text() << "\n";
  for (const plugin::CheckProblem& w : r.warnings) std::cout << "warning: " << w.text() << "\n";
  std::cout.flush();
  if (!r.problems.empty())
    throw std::runtime_error(std::to_string(r.problems.size()) + (r.problems.size() == 1 ? " problem" : " problems") +
                             " in the duet setup");
  std::cout << "ok: " << r.summary << "\n";
}

}  // namespace

void setup_check_config(CLI::App* app) {
  auto a = std::make_shared<CheckArgs>();
  app->add_option("--conf", a->conf, "duet.conf to check (default: next to the slurm.conf checked)");
  app->add_option("--slurm-conf", a->slurm_conf, "slurm.conf to check (default: $SLURM_CONF or /etc/slurm/slurm.conf)");
  auto* pending = app->add_flag("--pending", a->pending,
                                "before the switch: check slurm.conf with the lines duet-admin enable will write in "
                                "place of its PriorityType, PrioritySiteFactor* and SelectType lines");
  app->add_option("--mode", a->mode,
                  "with --pending: the duet-admin enable --mode, site-factor (site_factor/duet under multifactor) or "
                  "priority (priority/duet)")
      ->check(CLI::IsMember({"site-factor", "priority"}))
      ->needs(pending)
      ->capture_default_str();
  app->callback([a] { check_config(*a); });
}

}  // namespace duet::cli
