// select/duet's steering: node bias from the placement agent, explanations,
// observations and their saved state (man duet.conf(5)).
//
// The agents' messages (agent_channel.h): a learned ranker is connected to
// the process's channel; select/duet attaches as the placement agent in
// slurmctld, before priority/duet loads.
//
// Locking: slurmctld calls job_test / job_begin / job_fini with its job and
// node locks held; `g.mu` is always taken after them, never before.
#include "plugins/select/duet/steering.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>
#include <vector>
#include <string>

#include <strings.h>

#include "plugins/channel/agent_channel.h"
#include "plugins/seam/duet_conf.h"
#include "plugins/seam/explain.h"
#include "plugins/seam/placement_agent.h"
#include "plugins/slurm/job_comment_store.h"
#include "plugins/slurm/job_fit.h"
#define DUET_DEBUG_FLAG DEBUG_FLAG_SELECT_TYPE  // scontrol setdebugflags +SelectType
#include "plugins/slurm/slurm_log.h"
#include "plugins/slurm/slurm_views.h"

namespace duet::plugin {
namespace {

constexpr const char* kTag = "select/duet";
constexpr const char* kStateFile = "duet_select_state";
constexpr const char* kStateMagic = "duet-select-state";
constexpr int kStateVersion = 1;
// Tier bits inserted between the admin's Weight (bits 8..39, flags 40/41)
// and cons_tres's low byte: sched_weight = weight&flags | tier | low byte.
constexpr int kTierBits = 16;
constexpr uint64_t kMaxTier = (1u << kTierBits) - 1;

// Why a job's nodes, from the job_test that selected them.
struct Placement {
  std::string reason;             // the ranker's text, or why cons_tres's order
  bool ranked = false;            // `nodes` holds the ranker's preferences
  std::vector<RankedNode> nodes;  // the nodes the job may use
};

struct State {
  std::mutex mu;
  bool active = false;    // slurmctld, after init
  bool selected = false;  // SelectType=select/duet: the placement agent on the channel
  DuetConf conf;
  PlacementAgent agent;
  std::string agent_error;                // why there is no ranker
  std::map<uint32_t, Placement> reasons;  // job id -> why its nodes
  std::string last_error;                 // of the ranker, logged once a minute
  time_t last_error_time = 0;
  // The configuration problems the last load logged, and for which
  // slurm.conf (its last_update) and load (the one right after init or not).
  std::vector<std::string> logged_problems;
  time_t logged_update = 0;
  bool just_initialised = false;
};
State g;

// Logs a load's configuration problems once per configuration. slurmctld
// calls select_p_reconfigure right after init at start (read_slurm_conf) and
// again on partition and node changes, with slurm.conf unchanged: those
// loads re-read duet.conf as before but do not log the same problems again.
// `scontrol reconfigure` re-reads slurm.conf (a new last_update) and logs
// them all. Holds g.mu.
void log_problems_locked(const std::vector<std::string>& problems) {
  const bool repeat =
      problems == g.logged_problems && (g.just_initialised || slurm_conf.last_update == g.logged_update);
  if (!repeat)
    for (const std::string& p : problems) error("%s: %s", kTag, p.c_str());
  g.logged_problems = problems;
  g.logged_update = slurm_conf.last_update;
}

LogLevel level() { return g.conf.log_level; }

template <class F>
void guarded(const char* what, F&& f) {
  try {
    f();
  } catch (const std::exception& e) { error("%s: %s: %s", kTag, what, e.what()); } catch (...) {
    error("%s: %s: unknown exception", kTag, what);
  }
}

std::string state_path(const char* dir) { return std::string(dir ? dir : ".") + "/" + kStateFile; }

// Writes the observer's state next to Slurm's (tmp + rename). Holds g.mu.
void save_locked(const char* dir) {
  if (!g.agent.observer || !dir) return;
  std::string path = state_path(dir), tmp = path + ".new";
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << kStateMagic << ' ' << kStateVersion << '\n'
        << "observer " << g.agent.observer->name() << '\n'
        << g.agent.observer->save();
    out.flush();
    if (!out) {
      error("%s: cannot write %s: %s", kTag, tmp.c_str(), std::strerror(errno));
      return;
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0)
    error("%s: cannot rename %s to %s: %s", kTag, tmp.c_str(), path.c_str(), std::strerror(errno));
}

// Reads the saved observer state into the current observer. Holds g.mu.
void restore_locked(const char* dir) {
  if (!g.agent.observer) return;
  std::string path = state_path(dir);
  std::ifstream in(path);
  if (!in) {
    DUET_INFO(level(), "%s: no saved state in %s (%s), observer starts empty", kTag, path.c_str(),
              std::strerror(errno));
    return;
  }
  std::string magic, word, name;
  int version = 0;
  in >> magic >> version >> word >> name;
  in.ignore(1);  // the newline after the name
  if (magic != kStateMagic || version != kStateVersion || word != "observer") {
    error("%s: %s: not a %s version %d file; observer starts empty", kTag, path.c_str(), kStateMagic, kStateVersion);
    return;
  }
  if (name != g.agent.observer->name()) {
    error("%s: %s holds state of observer '%s', configured is '%s'; observer starts empty", kTag, path.c_str(),
          name.c_str(), g.agent.observer->name().c_str());
    return;
  }
  std::stringstream rest;
  rest << in.rdbuf();
  g.agent.observer->set_cluster(cluster_info(time(nullptr)));
  std::string err;
  if (!g.agent.observer->restore(rest.str(), &err)) {
    error("%s: %s: %s; observer starts empty", kTag, path.c_str(), err.c_str());
    g.agent.observer->restore("", &err);
    return;
  }
  DUET_INFO(level(), "%s: observer %s restored from %s: %s", kTag, name.c_str(), path.c_str(),
            g.agent.observer->summary().c_str());
}

// (Re)reads duet.conf and builds the agent; carries the observer's state
// over when the new one is of the same kind. Holds g.mu.
void load_locked() {
  std::string path = duet_conf_path_for(slurm_conf.slurm_conf ? slurm_conf.slurm_conf : "");
  ConfResult r = load_duet_conf(path, slurm_conf.slurm_user_id);  // only root and SlurmUser may steer
  g.conf = r.conf;
  std::vector<std::string> problems;
  for (const auto& e : r.errors) problems.push_back(e.text());
  std::vector<std::string> errors;
  PlacementAgent fresh = make_placement_agent(g.conf, &errors);
  g.agent_error.clear();
  for (const std::string& e : errors) {
    problems.push_back(e + "; placing by cons_tres's own order");
    g.agent_error += (g.agent_error.empty() ? "" : "; ") + e;
  }
  log_problems_locked(problems);
  if (g.agent.observer && fresh.observer && g.agent.observer->name() == fresh.observer->name()) {
    std::string err;
    if (!fresh.observer->restore(g.agent.observer->save(), &err))
      error("%s: carrying observer state over: %s", kTag, err.c_str());
  }
  g.agent = std::move(fresh);
  if (g.selected) {
    // A ranker without messages publishes none: drop the previous ranker's.
    agent_channel()->publish_placement_message({});
    if (g.agent.ranker) g.agent.ranker->connect(agent_channel());
  }
  DUET_INFO(level(), "%s: ranker %s, observer %s, config %s%s", kTag,
            g.agent.ranker ? g.agent.ranker->name().c_str() : "none (cons_tres order)",
            g.agent.observer ? g.agent.observer->name().c_str() : "none", path.c_str(),
            r.file_found ? "" : " (not found, defaults)");
}

std::string fmt_pref(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

// The ranker's preference per cluster node, checked: one finite value per
// node. Holds g.mu.
bool rank_nodes(const JobInfo& job, const ClusterInfo& cluster, std::vector<double>* pref, std::string* why,
                std::string* error) {
  if (!g.agent.ranker->rank(job, cluster, *pref, why, error)) return false;
  if (pref->size() != cluster.nodes.size()) {
    *error = "wrong number of preferences";
    return false;
  }
  for (size_t i = 0; i < pref->size(); ++i)
    if (!std::isfinite((*pref)[i])) {
      *error = "non-finite preference for " + cluster.nodes[i].name;
      return false;
    }
  return true;
}

// Logs a ranker failure, the same one at most once a minute. Holds g.mu.
void log_ranker_failure(const job_record_t* job, const std::string& err, time_t now) {
  if (err == g.last_error && now - g.last_error_time < 60) return;
  error("%s: ranker %s failed for %pJ: %s; cons_tres order", kTag, g.agent.ranker->name().c_str(), job, err.c_str());
  g.last_error = err;
  g.last_error_time = now;
}

// Distinct preferences among the candidates, best first, become tiers in
// each candidate's sched_weight; `saved` gets the weights before.
void raise_preferred(const std::vector<node_record_t*>& records, bitstr_t* candidates, const std::vector<double>& pref,
                     std::vector<std::pair<node_record_t*, uint64_t>>* saved) {
  std::vector<double> levels;
  for (size_t i = 0; i < records.size(); ++i)
    if (bit_test(candidates, records[i]->index)) levels.push_back(pref[i]);
  std::sort(levels.begin(), levels.end(), std::greater<>());
  levels.erase(std::unique(levels.begin(), levels.end()), levels.end());
  for (size_t i = 0; i < records.size(); ++i) {
    if (!bit_test(candidates, records[i]->index)) continue;
    uint64_t tier = std::min<uint64_t>(
        std::lower_bound(levels.begin(), levels.end(), pref[i], std::greater<>()) - levels.begin(), kMaxTier);
    uint64_t w = records[i]->sched_weight;
    saved->emplace_back(records[i], w);
    records[i]->sched_weight = ((w >> 8) << (8 + kTierBits)) | (tier << 8) | (w & 0xff);
  }
}

// Leaves out of `candidates` the nodes the ranker keeps the job off
// (NodeRanker::keep_off), unless the job names the nodes it needs
// (--nodelist): those stay its own choice. Appends the nodes it left out
// (node table indices) to left_out.
void keep_off_slow_nodes(const job_record_t* job, const JobInfo& info, const ClusterInfo& cluster,
                         const std::vector<node_record_t*>& records, bitstr_t* candidates,
                         std::vector<size_t>& left_out) {
  if (job->details && job->details->req_node_bitmap) return;
  std::vector<bool> candidate(records.size()), off;
  for (size_t i = 0; i < records.size(); ++i) candidate[i] = bit_test(candidates, records[i]->index);
  g.agent.ranker->keep_off(info, cluster, candidate, off);
  for (size_t i = 0; i < records.size() && i < off.size(); ++i)
    if (off[i] && candidate[i]) {
      bit_clear(candidates, records[i]->index);
      left_out.push_back(i);
    }
}

// "node1=0.5 node3=0.25": the candidates' preferences, for the explanation.
std::string candidate_preferences(const ClusterInfo& cluster, const std::vector<node_record_t*>& records,
                                  bitstr_t* candidates, const std::vector<double>& pref) {
  std::string prefs;
  for (size_t i = 0; i < records.size(); ++i)
    if (bit_test(candidates, records[i]->index))
      prefs += (prefs.empty() ? "" : " ") + cluster.nodes[i].name + "=" + fmt_pref(pref[i]);
  return prefs;
}

}  // namespace

void steering_init() {
  guarded("init", [] {
    std::lock_guard<std::mutex> lk(g.mu);
    // slurmctld loads every select plugin in PluginDir: only the one in
    // use (SelectType) places jobs and speaks for the placement agent.
    g.selected = slurm_conf.select_type && !strcasecmp(slurm_conf.select_type, kTag);
    load_locked();
    g.just_initialised = true;  // the next load is start-up's select_p_reconfigure
    g.active = true;
    if (g.selected) agent_channel()->attach(AgentChannel::Agent::kPlacement, true);
    debug("%s: agent channel %s", kTag, g.selected ? "ready, placement agent attached" : "unused (not SelectType)");
  });
}

void steering_fini() {
  guarded("fini", [] {
    std::lock_guard<std::mutex> lk(g.mu);
    g.active = false;
    if (g.selected) agent_channel()->attach(AgentChannel::Agent::kPlacement, false);  // drops our message
    g.selected = false;
    g.agent = {};
    g.reasons.clear();
    g.logged_problems.clear();
  });
}

void steering_reconfigure() {
  guarded("reconfigure", [] {
    std::lock_guard<std::mutex> lk(g.mu);
    if (g.active) load_locked();
    g.just_initialised = false;
  });
}

void steering_state_save(const char* dir) {
  guarded("state save", [dir] {
    std::lock_guard<std::mutex> lk(g.mu);
    if (g.active) save_locked(dir);
  });
}

void steering_state_restore(const char* dir) {
  guarded("state restore", [dir] {
    std::lock_guard<std::mutex> lk(g.mu);
    if (g.active) restore_locked(dir);
  });
}

void steering_job_begin(job_record_t* job) {
  guarded("job begin", [job] {
    std::lock_guard<std::mutex> lk(g.mu);
    if (!g.active) return;
    auto it = g.reasons.find(job->job_id);
    Placement placement;
    placement.reason = "cons_tres order";
    if (it != g.reasons.end()) {
      placement = std::move(it->second);
      g.reasons.erase(it);
    }
    uint32_t gpus;
    std::string type;
    if (!job_gpu_request(job, &gpus, &type)) return;  // CPU-only: plain Slurm
    std::vector<std::string> nodes = job_node_names(job);
    std::string reason =
        placement.ranked ? placement_reason(placement.reason, placement.nodes, nodes) : placement.reason;
    if (g.conf.explain && explain_owned(job->system_comment)) {
      std::string text = explain_placement(job->system_comment, nodes, reason);
      xfree(job->system_comment);
      job->system_comment = xstrdup(text.c_str());
      // The explanation is final now: into accounting, for sacct after the
      // job ends (again at job fini, when the job's row is there for sure).
      if (job_recorded(job)) store_system_comment(job);
    }
    DUET_DEBUG(level(), "%s: %pJ started: %s", kTag, job, reason.c_str());
  });
}

void steering_job_fini(job_record_t* job) {
  guarded("job fini", [job] {
    std::lock_guard<std::mutex> lk(g.mu);
    if (!g.active) return;
    g.reasons.erase(job->job_id);
    // Its completion record is queued: the job's accounting row exists by
    // the time slurmdbd reads this.
    if (g.conf.explain && job->system_comment && *job->system_comment && explain_owned(job->system_comment))
      store_system_comment(job);
    if (!g.agent.observer || job->start_time <= 0) return;
    // A run after a requeue did only what the earlier runs left (a preempted
    // job resumes from its checkpoint): its run time says nothing of the
    // node's speed for the job's whole work.
    if (job->restart_cnt > 0) return;
    JobOutcome o;
    o.job = job_info(job, time(nullptr));
    if (o.job.gpus == 0) return;  // the agents learn GPU jobs only
    time_t end = job->end_time > job->start_time ? job->end_time : time(nullptr);
    o.run_s = static_cast<double>(end - job->start_time);
    o.nodes = job_node_names(job);
    o.completed = IS_JOB_COMPLETE(job);
    o.end = static_cast<int64_t>(end);
    g.agent.observer->set_cluster(cluster_info(time(nullptr)));
    g.agent.observer->observe(o);
    save_locked(slurm_conf.state_save_location);  // a SIGKILL loses nothing
    DUET_VERBOSE(level(), "%s: observer %s updated by %pJ (%.0f s): %s", kTag, g.agent.observer->name().c_str(), job,
                 o.run_s, g.agent.observer->summary().c_str());
  });
}

NodeBias::NodeBias(job_record_t* job, bitstr_t* candidates, uint16_t mode) : job_(job), mode_(mode) {
  guarded("job test", [&] {
    std::lock_guard<std::mutex> lk(g.mu);
    if (!g.active || !job || !candidates) return;
    if (!g.agent.ranker) {
      reason_ = g.agent_error.empty() ? "cons_tres order (no ranker configured)"
                                      : "cons_tres order (placement agent unavailable)";
      return;
    }
    time_t now = time(nullptr);
    JobInfo info = job_info(job, now);
    if (info.gpus == 0) return;
    ClusterInfo cluster = cluster_info(now);
    std::vector<node_record_t*> records;  // same order as cluster.nodes
    node_record_t* node;
    for (int i = 0; (node = next_node(&i)); i++) records.push_back(node);
    if (records.size() != cluster.nodes.size()) return;

    std::vector<double> pref;
    std::string why, err;
    if (!rank_nodes(info, cluster, &pref, &why, &err)) {
      log_ranker_failure(job, err, now);
      reason_ = "cons_tres order (ranker failed: " + err + ")";
      return;
    }
    // For the explanation, when this test may start the job; before the floor
    // and cons_tres narrow `candidates`.
    std::vector<NodeFit> fit;
    if (SELECT_IS_MODE_RUN_NOW(mode)) fit = job_node_fit(job, candidates);
    // Not in a test of whether the job could ever run (at submission): that
    // stays cons_tres's answer over every node.
    std::vector<size_t> left_out;
    if (SELECT_IS_MODE_RUN_NOW(mode) || SELECT_IS_MODE_WILL_RUN(mode)) {
      keep_off_slow_nodes(job, info, cluster, records, candidates, left_out);
      for (size_t i : left_out) below_floor_.push_back(records[i]->index);
      if (!left_out.empty())
        floor_note_ = "; " + std::to_string(left_out.size()) + " nodes below the speed floor left out";
    }
    raise_preferred(records, candidates, pref, &saved_);
    one_node_ =
        (SELECT_IS_MODE_RUN_NOW(mode) || SELECT_IS_MODE_WILL_RUN(mode)) && g.agent.ranker->one_node(info, cluster);
    reason_ = (why.empty() ? g.agent.ranker->name() : why) + floor_note_;
    ranked_ = fit.size() == cluster.nodes.size();
    std::vector<char> floored(fit.size(), 0);
    for (size_t i : left_out)
      if (i < floored.size()) floored[i] = 1;
    for (size_t i = 0; ranked_ && i < fit.size(); ++i) {
      if (!fit[i].may_use) continue;
      if (floored[i]) floored_.emplace_back(nodes_.size(), fit[i].busy);
      nodes_.push_back({cluster.nodes[i].name, pref[i], floored[i] ? "below the speed floor" : fit[i].busy});
    }
    DUET_DEBUG(level(), "%s: %pJ mode %u: %s [%s]", kTag, job, mode, reason_.c_str(),
               candidate_preferences(cluster, records, candidates, pref).c_str());
  });
}

void NodeBias::done(bool selected) {
  guarded("job test", [&] {
    if (!selected || !SELECT_IS_MODE_RUN_NOW(mode_) || reason_.empty()) return;
    std::lock_guard<std::mutex> lk(g.mu);
    if (!g.active) return;
    if (g.reasons.size() > 10000) g.reasons.clear();  // jobs selected but never begun
    g.reasons[job_->job_id] = Placement{reason_, ranked_, std::move(nodes_)};
  });
}

void NodeBias::drop_floor(bitstr_t* candidates) {
  for (int index : below_floor_) bit_set(candidates, index);
  below_floor_.clear();
  guarded("job test", [&] {
    const size_t at = reason_.rfind(floor_note_);
    if (at != std::string::npos) reason_.erase(at, floor_note_.size());
    reason_ += "; speed floor not applied (the nodes above it could never hold the job)";
    for (auto& [i, busy] : floored_) nodes_[i].not_taken = busy;
    floored_.clear();
  });
}

NodeBias::~NodeBias() {
  // Keep cons_tres's low byte (GPU co-location), put back the rest.
  for (auto& [node, w] : saved_) node->sched_weight = (w & ~uint64_t{0xff}) | (node->sched_weight & 0xff);
}

}  // namespace duet::plugin
