// duet explain JOBID: why the duet plugins ranked and placed a job -- the
// explanation they keep in its SystemComment (plugins/seam/explain.h), read
// from slurmctld while it holds the job, then from accounting (man
// duet-explain(1)).
#include <iostream>
#include <optional>
#include <stdexcept>
#include <string_view>

#include "tools/duet/commands.h"
#include "tools/duet/common.h"
#include "replay/job_explanation.h"
#include "replay/run_command.h"

namespace duet::cli {
namespace {

constexpr std::string_view kPrefix = "duet:";
constexpr std::string_view kPlacementPart = "; nodes ";  // select/duet's part (plugins/seam/explain.h)

replay::JobExplanation from_accounting(const std::string& id, const replay::JobIdSpec& spec) {
  std::vector<std::string> argv = {"sacct", "--json", "-j", id};
  replay::CommandResult r = replay::run_command(argv, 30);
  if (r.status != 0) throw std::runtime_error(replay::command_text(argv) + " failed: " + r.err);
  return replay::parse_sacct_json(r.out, spec);
}

// Structured output only (replay/job_explanation.h): squeue --json, then
// sacct --json; never `scontrol show job`, whose text mixes the user's
// fields with Slurm's.
void explain(const std::string& id, bool accounting_only) {
  const std::optional<replay::JobIdSpec> spec = replay::parse_job_id(id);
  if (!spec) throw std::invalid_argument("'" + id + "' is not a job id (expected N, or N_T for an array task)");
  replay::JobExplanation e;
  std::string source, ctld_error;
  if (!accounting_only) {
    replay::CommandResult r = replay::run_command({"squeue", "--json"}, 20);
    if (r.status == 0) {
      e = replay::parse_squeue_json(r.out, *spec);
      source = "slurmctld (squeue --json)";
    } else {
      ctld_error = r.err;
      while (!ctld_error.empty() && (ctld_error.back() == '\n' || ctld_error.back() == ' ')) ctld_error.pop_back();
    }
  }
  if (!e.found) {
    e = from_accounting(id, *spec);
    if (!e.found)
      throw std::runtime_error("job " + id + " is known neither to slurmctld" +
                               (ctld_error.empty() ? std::string() : " (" + ctld_error + ")") +
                               " nor to accounting (sacct)");
    source = accounting_only ? "accounting (sacct --json)"
                             : "accounting (sacct --json; slurmctld no longer holds the job)";
  }
  std::cout << "job " << id << ": state " << e.state;
  if (!e.priority.empty()) std::cout << ", priority " << e.priority;
  std::cout << ", nodes " << (e.nodes.empty() ? "(none)" : e.nodes) << "\n";
  std::cout << "source: " << source << "\n";
  if (e.comment.rfind(kPrefix, 0) != 0)
    throw std::runtime_error("job " + id +
                             " has no duet explanation (PriorityType=priority/duet, site_factor/duet or "
                             "SelectType=select/duet with Explain=yes in duet.conf writes it; select/duet "
                             "stores it in accounting once the job has started)");
  std::cout << e.comment << "\n";
  // ranked by duet, placed by another select plugin (select/cons_tres with
  // site_factor/duet, or after duet-admin disable): the text is its last
  // ranking while it pended, and there is no placement part to show
  if (!e.nodes.empty() && e.state != "PENDING" && e.comment.find(kPlacementPart) == std::string::npos)
    std::cout << "placement: not by select/duet (another select plugin gave the job its nodes)\n";
}

}  // namespace

void setup_explain(CLI::App* app) {
  auto id = std::make_shared<std::string>();
  auto sacct = std::make_shared<bool>(false);
  app->add_option("jobid", *id, "Slurm job id")->required();
  app->add_flag("--sacct", *sacct, "read accounting only (sacct), not slurmctld");
  app->callback([id, sacct] { explain(*id, *sacct); });
}

}  // namespace duet::cli
