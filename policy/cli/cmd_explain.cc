// duet explain JOBID: why the duet plugins ranked and placed a job -- the
// explanation they keep in its SystemComment (plugins/seam/explain.h).
#include <iostream>
#include <sstream>

#include "policy/cli/commands.h"
#include "policy/cli/common.h"
#include "replay/run_command.h"

namespace duet::cli {
namespace {

void explain(const std::string& id) {
  replay::CommandResult r = replay::run_command({"scontrol", "show", "job", id}, 20);
  if (r.status != 0) throw std::runtime_error("scontrol show job " + id + " failed: " + r.err);
  std::string comment, state, prio, nodes;
  std::istringstream in(r.out);
  for (std::string line; std::getline(in, line);) {
    size_t b = line.find_first_not_of(' ');
    if (b != std::string::npos && line.compare(b, 14, "SystemComment=") == 0) {
      comment = line.substr(b + 14);
      while (!comment.empty() && comment.back() == ' ') comment.pop_back();
      continue;
    }
    std::istringstream w(line);
    for (std::string word; w >> word;) {
      if (word.rfind("JobState=", 0) == 0)
        state = word.substr(9);
      else if (word.rfind("Priority=", 0) == 0)
        prio = word.substr(9);
      else if (word.rfind("NodeList=", 0) == 0)
        nodes = word.substr(9);
    }
  }
  std::cout << "job " << id << ": state " << state << ", priority " << prio << ", nodes " << nodes << "\n";
  if (comment.rfind("duet:", 0) != 0)
    throw std::runtime_error("job " + id +
                             " has no duet explanation (PriorityType=priority/duet or SelectType=select/duet "
                             "with Explain=yes in duet.conf writes it)");
  std::cout << comment << "\n";
}

}  // namespace

void setup_explain(CLI::App* app) {
  auto id = std::make_shared<std::string>();
  app->add_option("jobid", *id, "Slurm job id")->required();
  app->callback([id] { explain(*id); });
}

}  // namespace duet::cli
