// The checks of check_config.h, each appending what is wrong to the result.
#include "plugins/check/check_config.h"

#include <pwd.h>

#include <cstdint>
#include <map>
#include <memory>
#include <set>

#include "plugins/check/slurm_conf_file.h"
#include "plugins/seam/file_trust.h"
#include "plugins/seam/node_ranker.h"
#include "plugins/seam/seam.h"
#include "plugins/seam/site_factor_scale.h"
#include "policy/model/gavel.h"
#include "policy/util/printable.h"
#include "policy/util/text.h"

namespace duet::plugin {
namespace {

class Checker {
 public:
  explicit Checker(const CheckInput& in) : in_(in) {}

  CheckResult run() {
    check_slurm_conf();
    if (check_duet_conf()) {
      check_ordering_agent();
      check_placement_agent();
      check_preemption();
    }
    return std::move(result_);
  }

 private:
  void problem(const std::string& file, int line, std::string message) {
    result_.problems.push_back({file, line, std::move(message)});
  }
  void problem(const SlurmConfSetting& at, std::string message) { problem(at.file, at.line, std::move(message)); }

  // Where a duet.conf key was set, for a problem with what it names: its
  // line, or the file when the key was left at its default.
  void conf_problem(const char* key, std::string message, std::vector<CheckProblem>* into = nullptr) {
    auto it = conf_.key_lines.find(key);
    if (it == conf_.key_lines.end()) message += " (the default " + std::string(key) + ")";
    (into ? *into : result_.problems)
        .push_back({in_.duet_conf, it == conf_.key_lines.end() ? 0 : it->second, std::move(message)});
  }
  void conf_warning(const char* key, std::string message) { conf_problem(key, std::move(message), &result_.warnings); }

  // ---- slurm.conf ---------------------------------------------------------

  void check_slurm_conf() {
    std::string error;
    if (!read_slurm_conf(in_.slurm_conf, &slurm_, &error)) {
      result_.problems.push_back({"", 0, error});
      slurm_summary_ = "slurm.conf unreadable";
      return;
    }
    if (in_.pending) lay_enable_lines(*in_.pending);
    check_slurm_user();
    check_ordering_lines();
    check_select_lines();
  }

  // duet-admin edits slurm.conf only: a key it owns set in an Included
  // file stops it (check_includes there).
  void lay_enable_lines(EnableMode mode) {
    for (const char* key : {"PriorityType", "PrioritySiteFactorPlugin", "PrioritySiteFactorParameters", "SelectType"}) {
      const SlurmConfSetting* s = slurm_.find(key);
      if (s && s->file != in_.slurm_conf)
        problem(*s, std::string(key) + " is set here, Included by " + printable(in_.slurm_conf) +
                        ": duet-admin edits " + printable(in_.slurm_conf) + " only; move it there");
    }
    apply_enable_lines(mode, &slurm_);
    pending_note_ = std::string(" (as duet-admin enable --mode ") + enable_mode_name(mode) + " will write it)";
  }

  void check_slurm_user() {
    const SlurmConfSetting* user = slurm_.find("SlurmUser");
    if (!user) return;  // root
    if (const passwd* pw = getpwnam(user->value.c_str())) {
      slurm_uid_ = pw->pw_uid;
      slurm_user_ = user->value;
    } else {
      problem(*user, "SlurmUser '" + printable(user->value) + "' is no user on this host");
    }
  }

  std::string value(const char* key) const {
    const SlurmConfSetting* s = slurm_.find(key);
    return s ? s->value : "";
  }

  void missing(const std::string& what) { problem(in_.slurm_conf, 0, what); }

  // site_factor/duet under multifactor (recommended), or priority/duet.
  void check_ordering_lines() {
    const SlurmConfSetting* prio = slurm_.find("PriorityType");
    const SlurmConfSetting* site = slurm_.find("PrioritySiteFactorPlugin");
    const bool site_duet = site && iequal(site->value, "site_factor/duet");
    if (prio && iequal(prio->value, "priority/duet")) {
      if (site_duet) problem(*site, "site_factor/duet with PriorityType=priority/duet: two ordering agents; leave one");
      slurm_summary_ = "priority/duet";
    } else if (site_duet) {
      if (!prio || !iequal(prio->value, "priority/multifactor")) {
        std::string got = prio ? "'" + printable(prio->value) + "'" : "not set (priority/basic)";
        problem(*site, "site_factor/duet needs PriorityType=priority/multifactor; PriorityType is " + got);
      }
      check_site_factor_params();
      slurm_summary_ = "priority/multifactor + site_factor/duet";
    } else {
      std::string what =
          "no duet ordering plugin: expected PriorityType=priority/multifactor with "
          "PrioritySiteFactorPlugin=site_factor/duet (or PriorityType=priority/duet)";
      if (prio) {
        problem(*prio, what + ", got PriorityType=" + printable(prio->value));
      } else {
        missing(what);
      }
      slurm_summary_ = prio ? prio->value : "priority/basic";
    }
  }

  void check_site_factor_params() {
    const SlurmConfSetting* params = slurm_.find("PrioritySiteFactorParameters");
    if (!params) return;
    uint32_t weight = 0;
    std::string error;
    if (!parse_site_factor_params(params->value, &weight, &error))
      problem(*params, "PrioritySiteFactorParameters: " + error);
  }

  void check_select_lines() {
    const SlurmConfSetting* select = slurm_.find("SelectType");
    if (!select) {
      missing("SelectType not set: expected SelectType=select/duet");
    } else if (!iequal(select->value, "select/duet")) {
      problem(*select, "expected SelectType=select/duet, got " + printable(select->value));
    }
    slurm_summary_ += ", " + (select ? select->value : std::string("no SelectType"));
    // select/duet is cons_tres: it takes cons_tres's consumable resources
    const SlurmConfSetting* params = slurm_.find("SelectTypeParameters");
    if (!params) {
      missing("SelectTypeParameters not set: expected SelectTypeParameters=CR_Core (select/duet is cons_tres)");
    } else {
      std::string v = lower(params->value.substr(0, params->value.find(',')));
      if (v != "cr_cpu" && v != "cr_cpu_memory" && v != "cr_core" && v != "cr_core_memory" && v != "cr_socket" &&
          v != "cr_socket_memory" && v != "cr_memory")
        problem(*params,
                "SelectTypeParameters: expected a cons_tres resource (CR_Core, CR_CPU, CR_Socket, "
                "with or without _Memory, or CR_Memory), got " +
                    printable(params->value));
    }
    // duet schedules GPU jobs: without gres/gpu it sees none
    const SlurmConfSetting* gres = slurm_.find("GresTypes");
    bool gpu = false;
    for (size_t b = 0; gres && b <= gres->value.size();) {
      size_t e = gres->value.find(',', b);
      if (e == std::string::npos) e = gres->value.size();
      gpu = gpu || gres->value.substr(b, e - b) == "gpu";
      b = e + 1;
    }
    if (!gres) {
      missing("GresTypes not set: expected GresTypes=gpu (duet orders and places GPU jobs)");
    } else if (!gpu) {
      problem(*gres, "GresTypes does not list gpu (duet orders and places GPU jobs), got " + printable(gres->value));
    }
  }

  // ---- duet.conf and the files it names -----------------------------------

  // False when there is nothing more to check.
  bool check_duet_conf() {
    ConfResult r = load_duet_conf(in_.duet_conf);
    conf_ = std::move(r);
    for (const ConfError& e : conf_.errors) problem(e.file, e.line, e.message);
    if (!conf_.file_found) {
      if (in_.duet_conf_required) problem(in_.duet_conf, 0, "not found");
      conf_summary_ = in_.duet_conf + " (not found: all defaults)";
    } else {
      check_trust(in_.duet_conf);
      conf_summary_ = in_.duet_conf;
    }
    return true;
  }

  // file_trust.h's rule for slurm.conf's SlurmUser, once per file.
  bool check_trust(const std::string& path) {
    if (!trust_checked_.insert(path).second) return trusted_.count(path) > 0;
    std::string why;
    if (!file_trusted(path, slurm_uid_, &why)) {
      problem(path, 0, "refused: " + why);
      return false;
    }
    trusted_.insert(path);
    return true;
  }

  void check_ordering_agent() {
    const DuetConf& c = conf_.conf;
    if (c.scorer != "model") {
      ordering_summary_ = "Scorer=" + c.scorer;
      return;
    }
    std::string error;
    std::unique_ptr<OrderScorer> scorer = make_order_scorer(c, &error);
    if (!scorer) {
      conf_problem("ModelPath", error);
      ordering_summary_ = "Scorer=model (not loaded)";
      return;
    }
    check_trust(c.model_path);
    ordering_summary_ = "ordering agent " + printable(c.model_path) + " " + scorer->name();
    preemptive_ = scorer->preemptive();
  }

  // Preemption=requeue needs a preemptive model to do anything, and is
  // duet's own: Slurm's preemption beside it would requeue or kill by its
  // own rules.
  void check_preemption() {
    const DuetConf& c = conf_.conf;
    if (c.preemption != "requeue") return;
    if (c.scorer != "model") {
      conf_warning("Preemption",
                   "Preemption=requeue with Scorer=" + c.scorer + ", which is not preemptive: nothing is preempted");
    } else if (ordering_summary_.find("(not loaded)") == std::string::npos && !preemptive_) {
      conf_warning("Preemption", "Preemption=requeue but the model " + printable(c.model_path) +
                                     " is not preemptive (duet model init --preemptive, duet train --preemptive): "
                                     "nothing is preempted");
    } else if (preemptive_) {
      ordering_summary_ += ", preempting by requeue";
    }
    const SlurmConfSetting* slurm_preempt = slurm_.find("PreemptType");
    if (slurm_preempt && !iequal(slurm_preempt->value, "preempt/none"))
      result_.warnings.push_back({slurm_preempt->file, slurm_preempt->line,
                                  "PreemptType=" + printable(slurm_preempt->value) +
                                      " preempts too, by Slurm's own rules (PreemptMode=REQUEUE kills jobs it cannot "
                                      "requeue); with duet's Preemption=requeue, PreemptType=preempt/none"});
  }

  bool check_speeds() {
    const DuetConf& c = conf_.conf;
    if (c.node_speeds_file.empty()) return true;
    std::map<std::string, double> speeds;
    std::string error;
    if (!read_node_speeds(c.node_speeds_file, &speeds, &error)) {
      conf_problem("NodeSpeedsFile", "NodeSpeedsFile " + error);
      return false;
    }
    return check_trust(c.node_speeds_file);
  }

  bool check_job_type_speeds() {
    const DuetConf& c = conf_.conf;
    if (c.job_type_speeds_file.empty()) return true;
    try {
      read_gavel(c.job_type_speeds_file);
    } catch (const std::exception& e) {
      conf_problem("JobTypeSpeedsFile", std::string("JobTypeSpeedsFile ") + e.what());
      return false;
    }
    return check_trust(c.job_type_speeds_file);
  }

  void check_placement_agent() {
    DuetConf c = conf_.conf;
    const bool speeds_ok = check_speeds();
    if (!check_job_type_speeds()) c.job_type_speeds_file.clear();  // said above
    if (c.ranker == "none") {
      placement_summary_ = "Ranker=none";
      return;
    }
    if (c.ranker == "prefer-fast" && c.node_speeds_file.empty()) {
      conf_problem("Ranker", "Ranker=prefer-fast needs NodeSpeedsFile (a CSV with columns node and speed)");
      placement_summary_ = "Ranker=prefer-fast (no speeds)";
      return;
    }
    if (!speeds_ok) {
      if (c.ranker == "prefer-fast") return;  // said above
      c.node_speeds_file.clear();             // said above; now only the model's problems
    }
    std::vector<std::string> errors;
    PlacementAgent agent = make_placement_agent(c, &errors);
    for (const std::string& e : errors) conf_problem(c.ranker == "model" ? "PlacementModelPath" : "Ranker", e);
    if (!agent.ranker) {
      placement_summary_ = "Ranker=" + c.ranker + " (not loaded)";
      return;
    }
    if (c.ranker == "model") check_trust(c.placement_model_path);
    placement_summary_ = "placement agent " +
                         (c.ranker == "model" ? printable(c.placement_model_path) + " " : std::string()) +
                         agent.ranker->name();
  }

 public:
  std::string summary() const {
    return conf_summary_ + ": " + ordering_summary_ + "; " + placement_summary_ + "; " + in_.slurm_conf +
           pending_note_ + ": " + slurm_summary_ + "; files trusted for root and SlurmUser " + slurm_user_ + " (uid " +
           std::to_string(slurm_uid_) + ")";
  }

 private:
  const CheckInput& in_;
  CheckResult result_;
  SlurmConfFile slurm_;
  ConfResult conf_;
  std::uint32_t slurm_uid_ = 0;
  bool preemptive_ = false;  // the ordering model loaded is preemptive
  std::string slurm_user_ = "root";
  std::set<std::string> trust_checked_, trusted_;
  std::string conf_summary_, ordering_summary_, placement_summary_, slurm_summary_;
  std::string pending_note_;  // said of slurm.conf in the summary with `pending`
};

}  // namespace

std::string CheckProblem::text() const {
  std::string where = printable(file);
  if (line > 0) where += ":" + std::to_string(line);
  return where.empty() ? printable(message) : where + ": " + printable(message);
}

CheckResult check_duet_setup(const CheckInput& input) {
  try {
    Checker checker(input);
    CheckResult r = checker.run();
    r.summary = checker.summary();
    return r;
  } catch (const std::exception& e) {
    return {{{"", 0, std::string("checking the duet setup: ") + e.what()}}, "", {}};
  } catch (...) { return {{{"", 0, "checking the duet setup: unknown exception"}}, "", {}}; }
}

}  // namespace duet::plugin
