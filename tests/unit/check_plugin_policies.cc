// The plugins' Slurm-free policy pieces: priority ladder and CPU-only jobs'
// priority, site factor scale and its parameters, builtin scorers,
// prefer-fast ranker, node-stats observer, explanation text, the seams.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <stdexcept>
#include <string>
#include <unistd.h>
#include <vector>

#include "plugins/seam/explain.h"
#include "plugins/seam/order_scorer.h"
#include "plugins/seam/placement_agent.h"
#include "plugins/seam/priority_ladder.h"
#include "plugins/seam/site_factor_scale.h"

#include <check.h>  // last: it defines a fail() macro
#include "tests/unit/ck_string.h"
#include "tests/unit/run_suite.h"

using namespace duet::plugin;

// A seam call succeeded (bool, why in *err: plugins/seam/seam.h).
#define CK_OK(call, err) ck_assert_msg((call), "%s: %s", #call, (err).c_str())

START_TEST(test_ladder_monotone_and_slot) {
  PriorityLadder ladder;
  std::vector<double> scores = {0.5, 2.0, -1.0, 2.0};
  std::vector<uint32_t> p = ladder.assign(scores);
  ck_assert_uint_gt(p[1], p[3]);  // tie: earlier input first
  ck_assert_uint_gt(p[3], p[0]);
  ck_assert_uint_gt(p[0], p[2]);
  ck_assert_uint_eq(p[2], kLadderBase);
  uint32_t between = ladder.slot(1.0);
  ck_assert(between < p[3] && between > p[0]);
  ck_assert_uint_gt(ladder.slot(5.0), p[1]);
  ck_assert_uint_lt(ladder.slot(-5.0), p[2]);
  ck_assert(ladder.slot(0.5) < p[0] && ladder.slot(0.5) > p[2]);  // after equals
  PriorityLadder empty;
  ck_assert_uint_eq(empty.slot(1.0), kLadderBase);
}
END_TEST

// priority/duet: CPU-only jobs sit below every GPU job (never Slurm's top
// priority), FIFO among themselves (equal priorities), moved by nice.
START_TEST(test_cpu_job_priority) {
  PriorityLadder ladder;
  std::vector<double> scores = {3.0, 1.0, 2.0};
  std::vector<uint32_t> p = ladder.assign(scores);
  const uint32_t lowest_gpu = std::min({p[0], p[1], p[2], ladder.slot(-1e300), PriorityLadder().slot(0.0)});
  ck_assert_uint_ge(lowest_gpu, kLadderFloor);
  ck_assert_uint_eq(cpu_job_priority(0), kCpuJobPriority);
  ck_assert_uint_lt(cpu_job_priority(0), lowest_gpu);
  ck_assert_uint_lt(cpu_job_priority(-2147483647LL), lowest_gpu);  // most negative nice: still below
  ck_assert_uint_eq(cpu_job_priority(-2147483647LL), kCpuJobMax);
  ck_assert_uint_eq(cpu_job_priority(100), kCpuJobPriority - 100);  // nice 100: lower
  ck_assert_uint_eq(cpu_job_priority(-100), kCpuJobPriority + 100);
  ck_assert_uint_eq(cpu_job_priority(2147483647LL), 1u);  // never 0 (held)
  ck_assert_uint_lt(cpu_job_priority(-2147483647LL), 0xffff0000u);
}
END_TEST

// site_factor/duet: rank-normalised factors, NICE_OFFSET + weight * rank from
// the bottom / (n - 1); ties equal; a new job slotted as if it joined.
START_TEST(test_site_factor_scale) {
  SiteFactorScale scale(1000);
  std::vector<double> scores = {0.5, 2.0, -1.0, 2.0, 1e-9};
  std::vector<uint32_t> f = scale.assign(scores);
  ck_assert_uint_eq(f[2], kSiteFactorCentre);        // lowest score: 0
  ck_assert_uint_eq(f[4], kSiteFactorCentre + 250);  // 1 below of 4 others
  ck_assert_uint_eq(f[0], kSiteFactorCentre + 500);  // 2 below
  ck_assert_uint_eq(f[1], kSiteFactorCentre + 750);  // tie: 3 below each
  ck_assert_uint_eq(f[3], f[1]);
  ck_assert_int_eq(site_factor_shown(f[1]), 750);
  ck_assert_int_eq(site_factor_shown(kSiteFactorCentre - 5), -5);
  // the scorer's scale does not matter, only the order
  SiteFactorScale scaled(1000);
  std::vector<double> times_1e6 = {0.5e6, 2.0e6, -1.0e6, 2.0e6, 1e-3};
  ck_assert(scaled.assign(times_1e6) == f);
  // slotting: above all = full weight, below all = 0, between by rank among n+1
  ck_assert_uint_eq(scale.slot(9.0), kSiteFactorCentre + 1000);
  ck_assert_uint_eq(scale.slot(-9.0), kSiteFactorCentre);
  ck_assert_uint_eq(scale.slot(1.0), kSiteFactorCentre + 600);  // 3 of 5 below
  // a lone job is the top of its queue; an empty ranking slots at the top
  SiteFactorScale one(1000);
  ck_assert_uint_eq(one.assign(std::vector<double>{42.0})[0], kSiteFactorCentre + 1000);
  ck_assert_uint_eq(SiteFactorScale(1000).slot(0.0), kSiteFactorCentre + 1000);
  // the largest weight fits in 32 bits; weight 0 leaves every job at 0
  SiteFactorScale max(kMaxSiteWeight);
  std::vector<uint32_t> m = max.assign(scores);
  ck_assert_uint_eq(m[1], kSiteFactorCentre + 1610612735u);  // 3/4 of 2^31-1, rounded
  ck_assert_uint_eq(max.slot(9.0), 0xffffffffu);
  SiteFactorScale zero(0);
  for (uint32_t v : zero.assign(scores)) ck_assert_uint_eq(v, kSiteFactorCentre);
  ck_assert(SiteFactorScale().weight() == kDefaultSiteWeight);
}
END_TEST

START_TEST(test_site_factor_params) {
  uint32_t w = kDefaultSiteWeight;
  std::string err;
  CK_OK(parse_site_factor_params("", &w, &err), err);
  ck_assert_uint_eq(w, kDefaultSiteWeight);
  CK_OK(parse_site_factor_params("weight=5000", &w, &err), err);
  ck_assert_uint_eq(w, 5000);
  CK_OK(parse_site_factor_params(" Weight = 0 ,", &w, &err), err);
  ck_assert_uint_eq(w, 0);
  CK_OK(parse_site_factor_params("weight=2147483647", &w, &err), err);
  ck_assert_uint_eq(w, kMaxSiteWeight);
  w = 7;
  for (const char* bad : {"weight=2147483648", "weight=-1", "weight=1e3", "weight=", "weight", "scale=2",
                          "weight=10,foo=1", "weight=99999999999"}) {
    err.clear();
    ck_assert_msg(!parse_site_factor_params(bad, &w, &err), "accepted '%s'", bad);
    ck_assert_msg(err.rfind("PrioritySiteFactorParameters: ", 0) == 0, "'%s': %s", bad, err.c_str());
    ck_assert_uint_eq(w, 7);  // unchanged on error
  }
}
END_TEST

START_TEST(test_scorers) {
  std::vector<JobInfo> jobs(3);
  jobs[0].gpus = 8;
  jobs[0].wait_s = 100;
  jobs[1].gpus = 1;
  jobs[1].wait_s = 0;
  jobs[2].gpus = 1;
  jobs[2].wait_s = 50;
  ClusterInfo cluster;
  cluster.nodes.resize(2);
  cluster.nodes[0].gpus_total = cluster.nodes[1].gpus_total = 8;
  std::vector<double> s(3);
  std::string err;
  auto small = make_small_first_scorer();
  CK_OK(small->score(jobs, cluster, s, &err), err);
  ck_assert(s[2] > s[1] && s[1] > s[0]);
  DuetConf conf;
  conf.fallback_age_weight = 0;  // size only
  auto fb = make_fallback_scorer(conf);
  CK_OK(fb->score(jobs, cluster, s, &err), err);
  ck_assert(s[1] > s[0]);
  ck_assert(s[1] == s[2]);
  conf.fallback_age_weight = 1000;
  conf.fallback_size_weight = 0;
  conf.fallback_max_age_s = 100;
  fb = make_fallback_scorer(conf);
  fb->score(jobs, cluster, s, &err);
  ck_assert(s[0] == 1000 && s[2] == 500 && s[1] == 0);
}
END_TEST

START_TEST(test_factory_seams) {
  DuetConf conf;
  conf.scorer = "model";
  conf.model_path = "/nonexistent/duet-ordering.model";
  std::string err;
  ck_assert_ptr_null(make_order_scorer(conf, &err).get());
  ck_assert_msg(err.find("/nonexistent/duet-ordering.model") != std::string::npos, "%s", err.c_str());
  conf.scorer = "small-first";
  auto s = make_order_scorer(conf, &err);
  ck_assert_ptr_nonnull(s.get());
  CK_STR_EQ(s->name(), "small-first");

  conf.ranker = "model";
  conf.placement_model_path = "/nonexistent/p.model";
  std::vector<std::string> errors;
  PlacementAgent a = make_placement_agent(conf, &errors);
  ck_assert_ptr_null(a.ranker.get());
  ck_assert_ptr_nonnull(a.observer.get());  // builtin observer still learns
  ck_assert_int_eq(errors.size(), 1);
  conf.ranker = "prefer-fast";
  conf.node_speeds_file = "";
  errors.clear();
  a = make_placement_agent(conf, &errors);
  ck_assert_ptr_null(a.ranker.get());
  ck_assert_int_eq(errors.size(), 1);
}
END_TEST

// Loaders as the agents' adapters would register them. good_loader keeps
// what the seam handed it: the file's bytes and their checksum, read once.
ModelFile g_loaded;
std::unique_ptr<OrderScorer> good_loader(const ModelFile& f, const DuetConf&, std::string*) {
  g_loaded = f;
  return make_small_first_scorer();
}
std::unique_ptr<OrderScorer> bad_loader(const ModelFile&, const DuetConf&, std::string* e) {
  *e = "bad magic";
  return nullptr;
}
std::unique_ptr<OrderScorer> throwing_loader(const ModelFile&, const DuetConf&, std::string*) {
  throw std::runtime_error("torch says no");
}
PlacementAgent placement_loader(const ModelFile&, const DuetConf&, std::string*) {
  PlacementAgent a;
  a.observer = make_node_stats_observer();
  return a;  // no ranker: counts as a failure
}

START_TEST(test_registered_loaders) {
  char path[] = "/tmp/check_loader.XXXXXX";
  int fd = mkstemp(path);
  ck_assert_int_ge(fd, 0);
  ck_assert_int_eq(write(fd, "x", 1), 1);
  close(fd);
  DuetConf conf;
  conf.scorer = "model";
  conf.model_path = path;
  std::string err;
  register_order_model_loader(&good_loader);
  auto s = make_order_scorer(conf, &err);
  ck_assert_ptr_nonnull(s.get());
  CK_STR_EQ(g_loaded.path, std::string(path));
  CK_STR_EQ(g_loaded.bytes, std::string("x"));
  ck_assert_uint_eq(g_loaded.cksum, 12738659u);  // `printf x | cksum`
  register_order_model_loader(&bad_loader);
  ck_assert_ptr_null(make_order_scorer(conf, &err).get());
  CK_STR_EQ(err, "ModelPath " + std::string(path) + ": bad magic");
  register_order_model_loader(&throwing_loader);
  ck_assert_ptr_null(make_order_scorer(conf, &err).get());
  ck_assert_msg(err.find("torch says no") != std::string::npos, "%s", err.c_str());
  register_order_model_loader(nullptr);

  conf.ranker = "model";
  conf.placement_model_path = path;
  register_placement_model_loader(&placement_loader);
  std::vector<std::string> errors;
  PlacementAgent a = make_placement_agent(conf, &errors);
  ck_assert_ptr_null(a.ranker.get());
  ck_assert_ptr_nonnull(a.observer.get());
  ck_assert_int_eq(errors.size(), 1);
  register_placement_model_loader(nullptr);
  unlink(path);
}
END_TEST

START_TEST(test_prefer_fast) {
  char path[] = "/tmp/check_prefer_fast.XXXXXX";
  int fd = mkstemp(path);
  ck_assert_int_ge(fd, 0);
  close(fd);
  std::ofstream(path) << "node,gpu_type,num_gpus,speed\nnode1,v100,4,1.0\nnode2,v100,4,0.5\n";
  std::string err;
  auto r = make_prefer_fast_ranker(path, &err);
  ck_assert_msg(r != nullptr, "%s", err.c_str());
  ClusterInfo c;
  c.nodes.resize(3);
  c.nodes[0].name = "node2";
  c.nodes[1].name = "node1";
  c.nodes[2].name = "node9";
  std::vector<double> pref;
  std::string why;
  CK_OK(r->rank(JobInfo{}, c, pref, &why, &err), err);
  ck_assert_int_eq(pref.size(), 3);
  ck_assert(pref[1] > pref[0] && pref[0] > pref[2]);
  std::ofstream(path) << "node,speed\nnode1,fast\n";
  ck_assert_ptr_null(make_prefer_fast_ranker(path, &err).get());
  ck_assert_msg(err.find(std::string(path) + ":2:7: field 'speed': expected a number, got 'fast'") == 0, "%s",
                err.c_str());
  // each node once: a second row for node1 is refused, not silently taken
  std::ofstream(path) << "node,speed\nnode1,1.0\nnode1,2.0\n";
  ck_assert_ptr_null(make_prefer_fast_ranker(path, &err).get());
  ck_assert_msg(err.find(std::string(path) + ":3:1: node 'node1' listed twice") == 0, "%s", err.c_str());
  unlink(path);
}
END_TEST

START_TEST(test_node_stats_roundtrip) {
  auto o = make_node_stats_observer();
  JobOutcome x;
  x.job.gpus = 2;
  x.nodes = {"node1", "node2"};
  x.run_s = 10;
  o->observe(x);
  x.nodes = {"node1"};
  x.run_s = 20;
  o->observe(x);
  CK_STR_EQ(o->summary(), "node1:jobs=2,mean_run_s=15.000 node2:jobs=1,mean_run_s=10.000");
  auto p = make_node_stats_observer();
  std::string err;
  CK_OK(p->restore(o->save(), &err), err);
  CK_STR_EQ(p->summary(), o->summary());
  ck_assert(!p->restore("node1 x y\n", &err));
  CK_STR_EQ(err, "line 1: expected 'NODE JOBS RUN_SECONDS'");
  CK_STR_EQ(p->summary(), o->summary());  // bad input changes nothing
}
END_TEST

START_TEST(test_explain) {
  ck_assert(explain_owned(nullptr));
  ck_assert(explain_owned(""));
  ck_assert(explain_owned("duet: rank 1/2"));
  ck_assert(!explain_owned("burst buffer: stage-in failed"));
  std::string r = explain_rank(2, 5, 0.25, "small-first");
  CK_STR_EQ(r, "duet: rank 2/5 score 0.25 by small-first");
  CK_STR_EQ(explain_rank(0, 0, -3, "x"), "duet: score -3 at submit by x");
  std::string p = explain_placement(r.c_str(), {"node1", "node3"}, "prefer-fast");
  CK_STR_EQ(p, "duet: rank 2/5 score 0.25 by small-first; nodes node1,node3: prefer-fast");
  std::string q = explain_placement(p.c_str(), {"node2"}, "again");
  CK_STR_EQ(q, "duet: rank 2/5 score 0.25 by small-first; nodes node2: again");
  std::string z = explain_placement(nullptr, {"n"}, "x");
  CK_STR_EQ(z, "duet:; nodes n: x");
}
END_TEST

START_TEST(test_explain_placement_reason) {
  // node1 best but full, node3 drained: the job got node2; node4 ranked below it
  std::vector<RankedNode> ranked = {
      {"node1", 0.9, "needs 4 GPUs, 0 free"}, {"node2", 0.5, ""}, {"node3", 0.7, "drained"}, {"node4", 0.1, ""}};
  CK_STR_EQ(placement_reason("prefer-fast: fastest free nodes first", ranked, {"node2"}),
            "prefer-fast: fastest free nodes first; ranking node1=0.9 node3=0.7 node2=0.5 node4=0.1; "
            "not taken: node1 (needs 4 GPUs, 0 free), node3 (drained)");
  // the best node taken: nothing passed over; a free node above a chosen one
  CK_STR_EQ(placement_reason("r", ranked, {"node1"}), "r; ranking node1=0.9 node3=0.7 node2=0.5 node4=0.1");
  ranked[2].not_taken.clear();
  CK_STR_EQ(placement_reason("r", ranked, {"node2", "node4"}),
            "r; ranking node1=0.9 node3=0.7 node2=0.5 node4=0.1; not taken: node1 (needs 4 GPUs, 0 free), node3 "
            "(cons_tres chose otherwise)");
  // placed on a node outside the ranking; no node the job may use
  CK_STR_EQ(placement_reason("r", ranked, {"other"}), "r; ranking node1=0.9 node3=0.7 node2=0.5 node4=0.1");
  CK_STR_EQ(placement_reason("r", {}, {"node1"}), "r; ranking (no node the job may use)");
  // a long ranking names kExplainMaxRanked nodes and counts the rest
  std::vector<RankedNode> many;
  for (int i = 0; i < 20; ++i) many.push_back({"n" + std::to_string(i), 20.0 - i, ""});
  std::string m = placement_reason("r", many, {"n0"});
  ck_assert(m.find(" n15=5 +4 more") != std::string::npos);
  ck_assert(m.find("n16=") == std::string::npos);
  // the whole explanation, as select/duet writes it
  std::string full = explain_placement("duet: rank 1/3 score 2 by small-first", {"node2"},
                                       placement_reason("prefer-fast", ranked, {"node2"}));
  ck_assert(full.rfind("duet: rank 1/3 score 2 by small-first; nodes node2: prefer-fast; ranking node1=0.9", 0) == 0);
}
END_TEST

// "Why is my job waiting": distinct ranks, the GPUs it waits for, the jobs
// ahead of it, and the wait part gone once the job is placed.
START_TEST(test_explain_waiting) {
  CK_STR_EQ(explain_gpus_short(4, 3, ""), "needs 4 GPUs, 3 free");
  CK_STR_EQ(explain_gpus_short(1, 0, "v100"), "needs 1 v100 GPU, 0 free");
  // equal values: the lower job id first, whatever the input order
  const std::vector<size_t> r = distinct_ranks({5, 9, 5, 5}, {30, 10, 12, 20});
  ck_assert_uint_eq(r[0], 4);
  ck_assert_uint_eq(r[1], 1);
  ck_assert_uint_eq(r[2], 2);
  ck_assert_uint_eq(r[3], 3);

  ClusterInfo c;
  NodeInfo n1{"node1", "v100", 4, 4, 8, 1, true};
  NodeInfo n2{"node2", "v100", 4, 1, 8, 1, true};
  NodeInfo n3{"node3", "k80", 4, 0, 8, 0, true};
  NodeInfo n4{"node4", "v100", 4, 0, 8, 0, false};  // drained: left out
  c.nodes = {n1, n2, n3, n4};
  auto job = [](uint32_t id, uint32_t gpus, std::string type, uint32_t nodes = 1) {
    JobInfo j;
    j.job_id = id;
    j.gpus = gpus;
    j.gpu_type = std::move(type);
    j.min_nodes = nodes;
    j.name = "evil\n; ahead: 1";  // never echoed
    return j;
  };
  std::vector<JobInfo> jobs = {job(11, 4, "v100"), job(12, 1, ""), job(13, 2, "k80"), job(14, 2, "v100"),
                               job(15, 1, "v100"), job(16, 1, "v100")};
  const std::vector<size_t> ranks = {6, 1, 2, 3, 4, 5};
  CK_STR_EQ(explain_waiting(0, jobs, ranks, c),
            "; waits for 4 v100 GPUs on one node: node2 has the most free, 3 of 4; ahead: 12 (1 GPU), 14 (2 v100 "
            "GPUs), 15 (1 v100 GPU) +1 more");
  // an untyped job could use the k80 node: its GPUs are free there
  CK_STR_EQ(explain_waiting(1, jobs, ranks, c),
            "; free now: 1 GPU (node2), waits for slurmctld's next scheduling pass or for CPUs or memory; no job "
            "ahead wants these GPUs");
  // a 2-node job: 4 on each, no node has 4 v100 GPUs free
  jobs[0].min_nodes = 2;
  jobs[0].gpus = 8;
  CK_STR_EQ(explain_waiting(0, jobs, ranks, c).substr(0, 62),
            "; waits for 8 v100 GPUs, 4 on each of 2 nodes: 0 nodes have th");
  // no usable node of its type
  jobs.push_back(job(17, 1, "a100"));
  CK_STR_EQ(explain_waiting(6, jobs, {6, 1, 2, 3, 4, 5, 7}, c),
            "; waits for 1 a100 GPU: no usable node has a100 GPUs (down or drained); ahead: 12 (1 GPU)");

  // not eligible before its --begin time (local time, as squeue shows it)
  setenv("TZ", "UTC", 1);
  tzset();
  c.now = 1796774400;  // 2026-12-09T00:00:00Z
  jobs[1].begin_time = c.now + 3600;
  CK_STR_EQ(explain_waiting(1, jobs, ranks, c),
            "; waits for its begin time 2026-12-09T01:00:00 (sbatch --begin); no job ahead wants these GPUs");
  jobs[1].begin_time = c.now;  // eligible now
  ck_assert(explain_waiting(1, jobs, ranks, c).rfind("; free now: ", 0) == 0);

  // the whole pending text; once placed, the wait part goes, a preemption stays
  const std::string pending = explain_rank(6, 6, 0.5, "m") + explain_waiting(1, jobs, ranks, c);
  CK_STR_EQ(explain_placement(pending.c_str(), {"node2"}, "r"), "duet: rank 6/6 score 0.5 by m; nodes node2: r");
  const std::string preempted = pending + "; preempted 1x, last: requeued after 700 s";
  CK_STR_EQ(explain_placement(preempted.c_str(), {"node2"}, "r"),
            "duet: rank 6/6 score 0.5 by m; preempted 1x, last: requeued after 700 s; nodes node2: r");
  CK_STR_EQ(explain_preemption_part(preempted.c_str()), "; preempted 1x, last: requeued after 700 s");

  // the learned part's share: |network| / (|network| + |prior|)
  ck_assert_double_eq_tol(learned_share(3, 4), 0.75, 1e-12);    // prior +1
  ck_assert_double_eq_tol(learned_share(-3, -2), 0.75, 1e-12);  // prior +1 on a negative network part
  ck_assert_double_eq(learned_share(0, 2), 0);
  ck_assert_double_eq(learned_share(0, 0), 0);
  ck_assert_double_eq(learned_share(NAN, 1), 0);
  CK_STR_EQ(explain_learned(0.625), "; learned part 63% of the score, prior 37%");
  CK_STR_EQ(explain_learned(1.5), "; learned part 100% of the score, prior 0%");
  // it stays once placed: it is part of the ranking decision
  const std::string ranked = explain_rank(1, 1, 2, "m") + explain_learned(0.5) + explain_waiting(1, jobs, ranks, c);
  CK_STR_EQ(explain_placement(ranked.c_str(), {"node2"}, "r"),
            "duet: rank 1/1 score 2 by m; learned part 50% of the score, prior 50%; nodes node2: r");
}
END_TEST

START_TEST(test_explain_bounded) {
  CK_STR_EQ(explain_bounded("duet: a'b\"c\\d|e`f\ng\x01h\xc3\xa9"), "duet: a'b\"c_d_e`f g h  ");
  std::string longer(3000, 'x');
  std::string b = explain_bounded("duet: " + longer);
  ck_assert_uint_eq(b.size(), kExplainMaxBytes);
  ck_assert(b.compare(b.size() - 3, 3, "...") == 0);
  ck_assert(explain_owned(b.c_str()));
  std::string exact = "duet: " + std::string(kExplainMaxBytes - 6, 'y');
  CK_STR_EQ(explain_bounded(exact), exact);  // at the bound: whole
  // every piece of the explanation keeps to the bound
  std::vector<RankedNode> many;
  for (int i = 0; i < 500; ++i) many.push_back({"node-with-a-long-name-" + std::to_string(i), 1.0 / (i + 1), "down"});
  std::string p =
      explain_placement(explain_rank(7, 9, 1.5, std::string(2000, 's')).c_str(), {"node-with-a-long-name-499"},
                        placement_reason(std::string(800, 'r'), many, {"node-with-a-long-name-499"}));
  ck_assert_uint_le(p.size(), kExplainMaxBytes);
  ck_assert_uint_le(explain_rank(1, 2, 3, std::string(5000, 'z')).size(), kExplainMaxBytes);
}
END_TEST

int main() {
  Suite* s = suite_create("plugin_policies");
  TCase* tc = tcase_create("policies");
  tcase_set_timeout(tc, 60);  // Check's default, 4 s, fails on a loaded host
  tcase_add_test(tc, test_ladder_monotone_and_slot);
  tcase_add_test(tc, test_cpu_job_priority);
  tcase_add_test(tc, test_site_factor_scale);
  tcase_add_test(tc, test_site_factor_params);
  tcase_add_test(tc, test_scorers);
  tcase_add_test(tc, test_factory_seams);
  tcase_add_test(tc, test_registered_loaders);
  tcase_add_test(tc, test_prefer_fast);
  tcase_add_test(tc, test_node_stats_roundtrip);
  tcase_add_test(tc, test_explain);
  tcase_add_test(tc, test_explain_placement_reason);
  tcase_add_test(tc, test_explain_bounded);
  tcase_add_test(tc, test_explain_waiting);
  suite_add_tcase(s, tc);
  return test_support::run_suite(s);
}
