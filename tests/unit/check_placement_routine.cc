// The one placement routine (policy/learn/agents/placement_routine.h) places alike
// for its three callers on the same model and cluster: the simulator's
// "duet" placement, the trainer's placement actor acting greedily, and
// select/duet's learned ranker (through the plugin's factory seam, no Slurm);
// and its speed prior leaves the GP's uncertainty to the head.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "plugins/seam/placement_agent.h"
#include "plugins/select/duet/placement_model.h"
#include "policy/learn/agents/duet_policy.h"
#include "policy/learn/agents/placement_routine.h"
#include "policy/learn/gp/performance_gp.h"
#include "policy/learn/model/model_file.h"
#include "policy/learn/nets/model_init.h"
#include "policy/learn/train/actors.h"
#include "policy/learn/train/rollout.h"
#include "tests/unit/spread_cluster.h"

// Last: check.h defines a fail() macro that breaks <ios>.
#include <check.h>
#include "tests/unit/run_suite.h"

using namespace duet;
using namespace duet::learn;

namespace {

Model test_model() {
  Model m = make_initial_model(NetConfig{}, GpHyper{}, 7);
  m.job_types = {"ResNet-50 (batch size 32)", "Transformer (batch size 64)"};
  return m;
}

using test_support::spread_cluster;
const std::vector<std::string>& kTypes = test_support::kSpreadTypes;

JobView job(int64_t id, int gpus) {
  JobView j;
  j.id = id;
  j.gpus = gpus;
  return j;
}

// The trainer's placement actor, greedy and without messages (as an unpaired
// simulator agent), after one ordering pass over `jobs`.
struct GreedyTrainer {
  Model model;
  Nets nets;
  Rollout r;
  TrainOrdering ord;
  TrainPlacement plc;
  GreedyTrainer(const Model& m, const DuetPolicyOptions& o)
      : model(m), nets(model), r(nets, model, 1, /*sample=*/false, without_messages(o)), ord(r), plc(r) {}
  static DuetPolicyOptions without_messages(DuetPolicyOptions o) {
    o.messages = false;
    return o;
  }
  std::optional<Placement> place(const JobView& j, const ClusterView& c) {
    std::vector<size_t> order;
    ord.rank(std::span<const JobView>(&j, 1), c, order);
    return plc.place(j, c);
  }
};

std::string describe(const std::optional<Placement>& p, std::span<const MachineView> ms) {
  if (!p) return "none";
  std::string s;
  for (const PlacementPart& part : *p) s += std::string(ms[part.machine].name) + ":" + std::to_string(part.gpus) + " ";
  return s;
}

// Same machines, same GPUs, same order, for jobs that fit one machine and
// jobs spread over several; with the default prior and one that prefers slow
// machines, where the fastest floor alone keeps the slow ones out.
void check_trainer_as_agent(double prior_weight) {
  const Model m = test_model();
  DuetPolicyOptions o;
  o.prior_weight = prior_weight;
  auto agent = make_duet_placement(std::make_shared<const Model>(m), o);
  GreedyTrainer trainer(m, o);
  const std::vector<MachineView> ms = spread_cluster();
  const ClusterView c{0, kTypes, ms, 20, 16, 0};
  int id = 1;
  for (int gpus : {1, 2, 3, 4, 6, 8, 16, 17, 18}) {
    const JobView j = job(id++, gpus);
    const auto a = agent->place(j, c), t = trainer.place(j, c);
    ck_assert_msg(a == t, "prior %g, %d GPUs: agent %s, trainer %s", prior_weight, gpus, describe(a, ms).c_str(),
                  describe(t, ms).c_str());
    if (a && gpus == 4)
      for (const PlacementPart& part : *a) ck_assert(ms[part.machine].speed >= 1.0);  // the floor
  }
}

START_TEST(trainer_places_as_the_agent) {
  check_trainer_as_agent(kPlacementPriorWeight);
  // Before the trainer applied the fastest floor, this one differed: its
  // 4-GPU job took the K80 and T4s.
  check_trainer_as_agent(-100);
}
END_TEST

// select/duet ranks nodes and cons_tres builds the set: a job one node holds
// goes to the best-ranked node that holds it, else the best-ranked nodes
// until it is held (what the tiers of steering.cc ask of cons_tres; a job
// the ranker wants on one node is asked for one node, select_duet.cc).
std::set<int> plugin_choice(const std::vector<double>& pref, const plugin::ClusterInfo& c, uint32_t gpus) {
  std::vector<int> order(pref.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int>(i);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return pref[a] > pref[b]; });
  auto free = [&](int i) { return c.nodes[i].gpus_total - c.nodes[i].gpus_alloc; };
  for (int i : order)
    if (free(i) >= gpus) return {i};
  std::set<int> set;
  uint32_t have = 0;
  for (int i : order) {
    if (free(i) == 0 || have >= gpus) continue;
    set.insert(i);
    have += free(i);
  }
  return set;
}

START_TEST(plugin_ranks_as_the_agent_places) {
  const std::string dir =
      std::filesystem::temp_directory_path() / ("check_placement_routine." + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  const Model m = test_model();
  save_model(m, dir + "/duet.model");
  // Four nodes; speeds far enough apart that the GP's rack edges (the
  // simulator has racks, select/duet none) do not change the order.
  const std::vector<std::string> names = {"node1", "node2", "node3", "node4"};
  const std::vector<double> speeds = {0.5, 1.5, 0.4, 0.9};
  const std::vector<uint32_t> alloc = {0, 2, 1, 3};
  std::ofstream(dir + "/speeds.csv") << "node,speed\nnode1,0.5\nnode2,1.5\nnode3,0.4\nnode4,0.9\n";
  plugin::DuetConf conf;
  conf.ranker = "model";
  conf.placement_model_path = dir + "/duet.model";
  conf.node_speeds_file = dir + "/speeds.csv";
  std::vector<std::string> errors;
  plugin::PlacementAgent plugin_agent = plugin::make_placement_agent(conf, &errors);
  ck_assert_msg(plugin_agent.ranker != nullptr, "%s", errors.empty() ? "no ranker" : errors[0].c_str());

  plugin::ClusterInfo pc;
  std::vector<MachineView> ms;
  const std::vector<std::string> types = {"v100", "k80"};
  for (size_t i = 0; i < names.size(); ++i) {
    plugin::NodeInfo n;
    n.name = names[i];
    n.gpu_type = types[i / 2];
    n.gpus_total = 4;
    n.gpus_alloc = alloc[i];
    n.jobs_running = alloc[i] ? 1 : 0;
    pc.nodes.push_back(n);
    // each machine its own rack: no locality between them, as in select/duet
    ms.push_back({names[i], static_cast<int>(i / 2), 4, 4 - static_cast<int>(alloc[i]), static_cast<int>(i), speeds[i],
                  n.jobs_running ? 1 : 0});
  }
  const ClusterView c{0, types, ms, 16, 10, 0};
  auto agent = make_duet_placement(std::make_shared<const Model>(m));
  int id = 1;
  // Jobs that waited out the one-machine floor (tested below), so that the
  // scores and the consolidation decide where a job one node holds goes.
  for (uint32_t gpus : {1u, 2u, 3u, 4u, 5u, 7u}) {
    plugin::JobInfo pj;
    pj.job_id = static_cast<uint32_t>(id);
    pj.gpus = gpus;
    pj.wait_s = kOneMachineFloorMaxWaitS;
    std::vector<double> pref;
    std::string err;
    ck_assert_msg(plugin_agent.ranker->rank(pj, pc, pref, nullptr, &err), "%s", err.c_str());
    JobView jv = job(id++, static_cast<int>(gpus));
    jv.wait_s = kOneMachineFloorMaxWaitS;
    const auto a = agent->place(jv, c);
    ck_assert(a.has_value());
    std::set<int> placed;
    for (const PlacementPart& part : *a) placed.insert(part.machine);
    ck_assert_msg(placed == plugin_choice(pref, pc, gpus), "%u GPUs: agent %s, plugin differs", gpus,
                  describe(a, ms).c_str());
    // node1 is idle: a job up to 4 GPUs goes on one node, a larger one is spread
    ck_assert(plugin_agent.ranker->one_node(pj, pc) == (gpus <= 4));
  }
  // Consolidation: with one GPU of node1 taken no node has 4 free, but each
  // could hold 4 whole: the agent waits, and the plugin asks for one node
  // (so cons_tres leaves the job pending). 5 GPUs are spread by both.
  pc.nodes[0].gpus_alloc = 1;
  pc.nodes[0].jobs_running = 1;
  ms[0].free_gpus = 3;
  ms[0].jobs = 1;
  const ClusterView busier{0, types, ms, 16, 9, 0};
  for (uint32_t gpus : {4u, 5u}) {
    plugin::JobInfo pj;
    pj.job_id = static_cast<uint32_t>(id);
    pj.gpus = gpus;
    const auto a = agent->place(job(id++, static_cast<int>(gpus)), busier);
    ck_assert_msg(a.has_value() == (gpus == 5), "%u GPUs: agent %s", gpus, describe(a, ms).c_str());
    ck_assert(plugin_agent.ranker->one_node(pj, pc) == (gpus == 4));
  }
  // The spread floor: an 8-GPU job's fastest set on the idle cluster is
  // node2 and node4 (0.9), so node3 (0.4) is below half of it. Without node3
  // 6 GPUs are free: the agent waits, and the plugin keeps the job off node3
  // (select/duet clears its bit, so cons_tres leaves the job pending). A node
  // the test does not offer does not count: without node4 the floor is 0.5
  // and node3 stays in.
  {
    plugin::JobInfo pj;
    pj.job_id = static_cast<uint32_t>(id);
    pj.gpus = 8;
    ck_assert(!agent->place(job(id++, 8), busier).has_value());
    std::vector<bool> off;
    plugin_agent.ranker->keep_off(pj, pc, {true, true, true, true}, off);
    ck_assert(off == std::vector<bool>({false, false, true, false}));
    plugin_agent.ranker->keep_off(pj, pc, {true, true, true, false}, off);
    ck_assert(off == std::vector<bool>({false, false, false, false}));
    // A job that waited kSpreadFloorMaxWaitS: the floor lets go, in both.
    JobView waited = job(id++, 8);
    waited.wait_s = pj.wait_s = kSpreadFloorMaxWaitS;
    ck_assert(agent->place(waited, busier).has_value());
    plugin_agent.ranker->keep_off(pj, pc, {true, true, true, true}, off);
    ck_assert(off == std::vector<bool>({false, false, false, false}));
    // The one-machine floor: a 3-GPU job fits node2 (1.5) alone, so it
    // keeps to nodes of at least 0.75, node2 and node4, which hold half the
    // GPUs; neither has 3 free: the agent waits, and the plugin keeps it off
    // node1 and node3. Once it has waited kOneMachineFloorMaxWaitS both let
    // it go to node1.
    pj.wait_s = 0;
    pj.gpus = 3;
    ck_assert(!agent->place(job(id++, 3), busier).has_value());
    plugin_agent.ranker->keep_off(pj, pc, {true, true, true, true}, off);
    ck_assert(off == std::vector<bool>({true, false, true, false}));
    pj.wait_s = kOneMachineFloorMaxWaitS;
    waited = job(id++, 3);
    waited.wait_s = kOneMachineFloorMaxWaitS;
    const auto let_go = agent->place(waited, busier);
    ck_assert(let_go.has_value() && let_go->size() == 1 && (*let_go)[0].machine == 0);
    plugin_agent.ranker->keep_off(pj, pc, {true, true, true, true}, off);
    ck_assert(off == std::vector<bool>({false, false, false, false}));
  }
  pc.nodes[2].gpu_type = pc.nodes[3].gpu_type = "v100";  // the job may use k80 nodes only:
  plugin::JobInfo k80;
  k80.gpus = 4;
  k80.gpu_type = "k80";
  ck_assert(plugin_agent.ranker->one_node(k80, pc) == false);  // none left
  std::filesystem::remove_all(dir);
}
END_TEST

// The speed prior does not hold jobs off the machines the GP has seen least
// (kPlacementRiskAversion, placement_features.h): two machines alike but
// for how often they were observed, at the mean expected, get the same
// prior though their GP sd differs; a risk-averse prior would split them.
struct NoScore : PlacementScorer {
  void score(std::span<const float>, std::size_t k, std::vector<float>& scores) override { scores.assign(k, 0.0f); }
};

START_TEST(prior_ignores_how_often_a_machine_was_seen) {
  const Model m = test_model();
  std::vector<MachineDesc> d = {{"a", "V100", "", {0.0}}, {"b", "V100", "", {0.0}}};
  PerformanceGp gp(d, static_cast<uint32_t>(m.job_types.size()), m.gp);
  for (int i = 0; i < 8; ++i) gp.observe(GpObservation{0, 0, 0.0});
  const std::vector<MachineView> ms = {{"a", 0, 4, 4, 0, 1.0, 0}, {"b", 0, 4, 4, 0, 1.0, 0}};
  NoScore none;
  PlacementScores s;
  s.machines = {0, 1};
  score_candidates(gp, ms, PlacementJob{0, 1}, -1, none, PriorWeights{}, s);
  const float sd_a = s.rows[kGpSd], sd_b = s.rows[kPlacementFeatures + kGpSd];
  ck_assert_msg(sd_a < 0.9 * sd_b, "the observed machine's sd %g is not below the other's %g", sd_a, sd_b);
  ck_assert_msg(std::abs(s.prior[0] - s.prior[1]) < 1e-9, "prior %g (seen 8 times) vs %g (never)", s.prior[0],
                s.prior[1]);
  PriorWeights averse;
  averse.risk_aversion = 1.0;
  score_candidates(gp, ms, PlacementJob{0, 1}, -1, none, averse, s);
  ck_assert(s.prior[0] > s.prior[1] + 0.1 * (sd_b - sd_a));
}
END_TEST
}  // namespace

int main() {
  duet::plugin::register_placement_agent();  // as select/duet's init() does
  Suite* s = suite_create("placement_routine");
  TCase* tc = tcase_create("core");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, trainer_places_as_the_agent);
  tcase_add_test(tc, plugin_ranks_as_the_agent_places);
  tcase_add_test(tc, prior_ignores_how_often_a_machine_was_seen);
  suite_add_tcase(s, tc);
  return test_support::run_suite(s);
}
