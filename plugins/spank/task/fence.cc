#include "plugins/spank/task/fence.h"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <regex>
#include <sstream>
#include <thread>

#include "plugins/spank/task/spawn.h"

namespace vmha_task {

namespace {

using Clock = std::chrono::steady_clock;

// "SlurmdTimeout           = 300 sec" -> 300; -1 when absent.
int config_seconds(const std::string& show_config, const std::string& key) {
  std::regex re("(^|\\n)" + key + " *= *([0-9]+) *sec");
  std::smatch m;
  return std::regex_search(show_config, m, re) ? std::stoi(m[2].str()) : -1;
}

// The State= field of `scontrol show node -o`, e.g. "DOWN*+NOT_RESPONDING"
// (not NextState=, nor a Reason= text).
std::string state_field(const std::string& show_node) {
  static const std::regex re("(^|\\s)State=(\\S+)");
  std::smatch m;
  return std::regex_search(show_node, m, re) ? m[2].str() : "";
}

bool marked(const std::string& dir) { return access((dir + "/primary.gone").c_str(), F_OK) == 0; }

}  // namespace

int down_wait_s(const std::string& show_config) {
  int slurmd = config_seconds(show_config, "SlurmdTimeout");
  if (slurmd <= 0) return 0;
  int message = config_seconds(show_config, "MessageTimeout");
  // slurmctld pings every SlurmdTimeout/3 and downs a node whose last answer
  // is older than SlurmdTimeout at a ping: at most ~5/3 SlurmdTimeout, plus
  // a ping's own timeout; the rest is margin for a loaded slurmctld.
  return 2 * slurmd + (message > 0 ? message : 10) + 10;
}

bool node_is_down(const std::string& show_node) {
  std::istringstream flags(state_field(show_node));
  for (std::string f; std::getline(flags, f, '+');) {
    while (!f.empty() && !std::isalpha(static_cast<unsigned char>(f.back()))) f.pop_back();  // DOWN*, IDLE~
    if (f == "DOWN" || f == "POWERED_DOWN") return true;
  }
  return false;
}

int fence(const std::string& dir, const std::string& node, int mark_wait_ms) {
  auto deadline = Clock::now() + std::chrono::milliseconds(mark_wait_ms);
  while (!marked(dir)) {
    if (Clock::now() >= deadline) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  if (marked(dir)) {
    std::fprintf(stderr, "vmha-task fence: the primary on %s was marked gone by its supervisor\n", node.c_str());
    return 0;
  }
  // Slurm as the witness: a node it declared down runs nothing of ours.
  int wait_s = down_wait_s(capture({"scontrol", "show", "config"}));
  if (wait_s > 0)
    std::fprintf(stderr, "vmha-task fence: no mark from the primary's supervisor; waiting up to %d s for Slurm to declare %s DOWN\n",
                 wait_s, node.c_str());
  deadline = Clock::now() + std::chrono::seconds(wait_s);
  std::string state;
  while (true) {
    std::string out = capture({"scontrol", "show", "node", node, "-o"});
    if (!out.empty()) state = state_field(out);
    if (node_is_down(out)) {
      std::fprintf(stderr, "vmha-task fence: Slurm has %s down (State=%s)\n", node.c_str(), state.c_str());
      return 0;
    }
    if (marked(dir)) {
      std::fprintf(stderr, "vmha-task fence: the primary on %s was marked gone by its supervisor\n", node.c_str());
      return 0;
    }
    if (Clock::now() >= deadline) break;
    std::this_thread::sleep_for(std::chrono::seconds(1));
  }
  std::fprintf(stderr, "vmha-task fence: Slurm still has %s up (State=%s) and its primary left no mark: it may be running; not taking over\n",
               node.c_str(), state.empty() ? "unknown" : state.c_str());
  return 1;
}

}  // namespace vmha_task
