// The plugins' learned-agent adapters without Slurm: Scorer=model and
// Ranker=model through the factory seams (plugins/seam/agent_factory.cc)
// with a fresh model file, the GP observer's save/restore, job hints, cksum,
// and the agents' messages through a channel (agent_channel.h).
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "plugins/channel/agent_channel.h"
#include "plugins/ordering/ordering_model.h"
#include "plugins/seam/file_cksum.h"
#include "plugins/seam/job_hints.h"
#include "plugins/seam/order_scorer.h"
#include "plugins/seam/placement_agent.h"
#include "plugins/select/duet/placement_model.h"
#include "policy/learn/agents/machine_set.h"
#include "policy/learn/nets/model_init.h"
#include "tests/unit/in_child.h"
#include "tests/unit/test_data.h"

#include <check.h>  // last: it defines a fail() macro
#include "tests/unit/ck_string.h"

using namespace duet::plugin;

// A seam call succeeded (bool, why in *err: plugins/seam/seam.h).
#define CK_OK(call, err) ck_assert_msg((call), "%s: %s", #call, (err).c_str())

namespace {

std::string g_dir;

// An untrained model may ignore the other agent's message (its listening
// weights start at zero): give them fixed non-zero values, as training
// would, so the message tests below see the messages matter.
void set_columns(duet::learn::Model& m, const std::string& name, size_t first, size_t count) {
  for (duet::learn::NamedArray& a : m.weights) {
    if (a.name != name) continue;
    ck_assert_uint_eq(a.shape.size(), 2);
    const size_t rows = static_cast<size_t>(a.shape[0]), cols = static_cast<size_t>(a.shape[1]);
    ck_assert(first + count <= cols);
    for (size_t r = 0; r < rows; ++r)
      for (size_t c = first; c < first + count; ++c)
        a.data[r * cols + c] = 0.5f * static_cast<float>(std::sin(1.0 + 7.0 * r + 3.0 * c));
    return;
  }
  ck_abort_msg("no weight %s in the model", name.c_str());
}

void listen_to_messages(duet::learn::Model& m) {
  const duet::learn::NetConfig& n = m.nets;
  set_columns(m, "ordering.head1.weight", 3 * n.ordering.embed + n.ordering.cluster_features,
              n.placement.placement_message);
  set_columns(m, "placement.l1.weight", n.placement.machine_features, n.ordering.order_message);
}

std::string model_file() {
  static std::string path;
  if (path.empty()) {
    path = g_dir + "/duet.model";
    duet::learn::Model m = duet::learn::make_initial_model(duet::learn::NetConfig{}, duet::learn::GpHyper{}, 7);
    m.job_types = {"ResNet-50 (batch size 32)", "Transformer (batch size 64)"};
    listen_to_messages(m);
    duet::learn::save_model(m, path);
  }
  return path;
}

std::string write_file(const std::string& name, const std::string& text) {
  std::string path = g_dir + "/" + name;
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

ClusterInfo cluster(uint32_t busy_on_node1 = 0) {
  ClusterInfo c;
  c.now = 1700000000;
  for (int i = 1; i <= 4; ++i) {
    NodeInfo n;
    n.name = "node" + std::to_string(i);
    n.gpu_type = i <= 2 ? "v100" : "k80";
    n.gpus_total = 4;
    n.cpus_total = 8;
    c.nodes.push_back(n);
  }
  c.nodes[0].gpus_alloc = busy_on_node1;
  c.nodes[0].jobs_running = busy_on_node1 ? 1 : 0;
  return c;
}

JobInfo job(uint32_t id, uint32_t gpus, double wait_s, const std::string& comment = "") {
  JobInfo j;
  j.job_id = id;
  j.user_id = 1000 + id % 3;
  j.account = "vc" + std::to_string(id % 2);
  j.gpus = gpus;
  j.wait_s = wait_s;
  j.submit_time = 1700000000 - static_cast<int64_t>(wait_s);
  j.comment = comment;
  return j;
}

DuetConf model_conf() {
  DuetConf c;
  c.scorer = "model";
  c.ranker = "model";
  c.model_path = c.placement_model_path = model_file();
  c.node_speeds_file = write_file("speeds.csv", "node,speed\nnode1,0.5\nnode2,1.5\nnode3,0.4\nnode4,0.45\n");
  return c;
}

// `user`'s job "bench" (600 s of work at speed 1) ran twice on a reference
// node at its known speed, then `runs` times on `node` at `factor` x its
// known speed: what slurmctld measures of an honest user's jobs on a node
// `factor` as fast as thought. Jobs end at t, t+1, ...
void teach(Observer& obs, const std::string& node, double known, double factor, uint32_t user, int64_t t,
           int runs) {
  JobInfo j = job(100, 1, 0);
  j.user_id = user;
  j.name = "bench";
  const std::string ref = node == "node2" ? "node1" : "node2";
  const double ref_known = ref == "node2" ? 1.5 : 0.5;
  for (int k = 0; k < 2; ++k) obs.observe(JobOutcome{j, {ref}, 600 / ref_known, true, t + k});
  for (int k = 0; k < runs; ++k) obs.observe(JobOutcome{j, {node}, 600 / (known * factor), true, t + 2 + k});
}

// The field KEY (e.g. "mu") of NODE in the rwgp observer's summary.
double summary_field(const std::string& summary, const std::string& node, const std::string& key) {
  const size_t at = summary.find(" " + node + ":");
  ck_assert_msg(at != std::string::npos, "%s not in %s", node.c_str(), summary.c_str());
  const size_t k = summary.find(key + "=", at);
  ck_assert_msg(k != std::string::npos, "%s of %s not in %s", key.c_str(), node.c_str(), summary.c_str());
  return std::strtod(summary.c_str() + k + key.size() + 1, nullptr);
}

// Node indices by preference, best first.
std::vector<size_t> order_of(const std::vector<double>& pref) {
  std::vector<size_t> o(pref.size());
  for (size_t i = 0; i < o.size(); ++i) o[i] = i;
  std::stable_sort(o.begin(), o.end(), [&](size_t a, size_t b) { return pref[a] > pref[b]; });
  return o;
}

uint32_t expected_crc() {
  uint32_t crc = 0;
  std::string err;
  ck_assert_msg(file_cksum(model_file(), &crc, &err), "%s", err.c_str());
  return crc;
}

}  // namespace

START_TEST(test_job_hints) {
  JobHints h = parse_job_hints("duet:ref=12.5;type=ResNet-50 (batch size 32)");
  ck_assert_double_eq_tol(h.ref_s, 12.5, 1e-12);
  CK_STR_EQ(h.type, "ResNet-50 (batch size 32)");
  h = parse_job_hints(format_job_hints(3.25, "A;b=c"));
  ck_assert_double_eq_tol(h.ref_s, 3.25, 1e-12);
  CK_STR_EQ(h.type, "A;b=c");
  h = parse_job_hints("my comment ref=5");
  ck_assert(h.ref_s < 0 && h.type.empty());
  h = parse_job_hints("duet:ref=abc;type=x");
  ck_assert(h.ref_s < 0);
  CK_STR_EQ(h.type, "x");
}
END_TEST

START_TEST(test_cksum_matches_posix) {
  uint32_t crc = 0;
  std::string err;
  ck_assert(file_cksum(write_file("hello.txt", "hello\n"), &crc, &err));
  ck_assert_uint_eq(crc, 3015617425u);  // `echo hello | cksum`
  ck_assert(file_cksum(write_file("empty.txt", ""), &crc, &err));
  ck_assert_uint_eq(crc, 4294967295u);  // `cksum < /dev/null`
  ck_assert(!file_cksum(g_dir + "/absent", &crc, &err));
  ck_assert(err.find("absent: cannot open") != std::string::npos);
}
END_TEST

START_TEST(test_ordering_agent_scores) {
  std::string err;
  auto s = make_order_scorer(model_conf(), &err);
  ck_assert_msg(s != nullptr, "%s", err.c_str());
  const std::string want = "model(cksum " + std::to_string(expected_crc()) + ", format 1)";
  CK_STR_EQ(s->name(), want);
  std::vector<JobInfo> jobs = {job(1, 1, 60), job(2, 8, 3600, "duet:ref=100;type=ResNet-50 (batch size 32)"),
                               job(3, 2, 5), job(4, 4, 0)};
  std::vector<double> scores(jobs.size(), 0.0);
  CK_OK(s->score(jobs, cluster(2), scores, &err), err);
  std::set<double> distinct;
  for (double x : scores) {
    ck_assert(std::isfinite(x));
    distinct.insert(x);
  }
  ck_assert_uint_eq(distinct.size(), jobs.size());
  // deterministic, and a job scored alone scores as in the batch only when
  // the features agree (cluster features include the queue): just finite
  std::vector<double> again(jobs.size(), 0.0);
  CK_OK(s->score(jobs, cluster(2), again, &err), err);
  for (size_t i = 0; i < jobs.size(); ++i) ck_assert_double_eq(scores[i], again[i]);
  // the explanation's learned share: one per job, in [0, 1], not all 0
  // (the fresh network's output is not zero) and not all 1 (a prior is added)
  const std::vector<double> shares = s->learned_shares();
  ck_assert_uint_eq(shares.size(), jobs.size());
  double lo = 1, hi = 0;
  for (double x : shares) {
    ck_assert(x >= 0 && x <= 1);
    lo = std::min(lo, x);
    hi = std::max(hi, x);
  }
  ck_assert(hi > 0);
  ck_assert(lo < 1);
  DuetConf fixed;
  fixed.scorer = "small-first";
  auto sf = make_order_scorer(fixed, &err);
  ck_assert_msg(sf != nullptr, "%s", err.c_str());
  std::vector<double> sf_scores(jobs.size(), 0.0);
  CK_OK(sf->score(jobs, cluster(2), sf_scores, &err), err);
  ck_assert(sf->learned_shares().empty());  // a fixed scorer: none
  std::vector<double> one(1, 0.0);
  CK_OK(s->score(std::span<const JobInfo>(jobs.data(), 1), ClusterInfo{}, one, &err), err);
  ck_assert(std::isfinite(one[0]));
  // finished jobs feed the duration history: job 1's features change
  for (int k = 0; k < 3; ++k) s->on_finish(job(1, 1, 0), 50000);
  CK_OK(s->score(jobs, cluster(2), again, &err), err);
  ck_assert(again[0] != scores[0]);
}
END_TEST

// A preemptive model (format 2) says so, and ranks running jobs with pending
// ones by their service as the simulator does (the LAS prior of an
// untrained model, order_prior.h): a running job still in LAS's first queue
// stays ahead of a fresh pending job, one past it falls behind.
START_TEST(test_preemptive_ordering_agent) {
  std::string err;
  auto plain = make_order_scorer(model_conf(), &err);
  ck_assert_msg(plain != nullptr, "%s", err.c_str());
  ck_assert(!plain->preemptive());
  duet::learn::NetConfig nc;
  nc.ordering.preemptive = 1;
  duet::learn::Model m = duet::learn::make_initial_model(nc, duet::learn::GpHyper{}, 7);
  DuetConf c = model_conf();
  c.model_path = g_dir + "/preemptive.model";
  duet::learn::save_model(m, c.model_path);
  auto s = make_order_scorer(c, &err);
  ck_assert_msg(s != nullptr, "%s", err.c_str());
  ck_assert(s->preemptive());
  ck_assert_msg(s->name().find(", format 2)") != std::string::npos, "%s", s->name().c_str());
  JobInfo run = job(1, 1, 30), wait = job(2, 1, 30);
  run.running = true;
  std::vector<double> scores(2, 0.0);
  for (double attained : {100.0, 8000.0}) {
    run.run_s = run.attained_gpu_s = attained;
    const std::vector<JobInfo> jobs = {run, wait};
    CK_OK(s->score_queue(jobs, cluster(1), scores, &err), err);
    if (attained < 3250)
      ck_assert_msg(scores[0] > scores[1], "running job in queue 0: %g, pending: %g", scores[0], scores[1]);
    else
      ck_assert_msg(scores[0] < scores[1], "running job past queue 0: %g, pending: %g", scores[0], scores[1]);
  }
  // The Gittins prior (untrained: the prior alone), no history yet (1 h
  // median, spread 1.5): a job 100 s or 5,000 s into its run (rank about
  // 8,000 s, halved while running) stays ahead of a fresh one (about 4,600
  // s), where LAS above put the 5,000 s one behind; one at 20,000 s, far
  // past its median, has more to go (about 18,500 s): behind it.
  nc.ordering.preemptive = duet::learn::kPreemptGittins;
  c.model_path = g_dir + "/gittins.model";
  duet::learn::save_model(duet::learn::make_initial_model(nc, duet::learn::GpHyper{}, 7), c.model_path);
  auto g = make_order_scorer(c, &err);
  ck_assert_msg(g != nullptr && g->preemptive(), "%s", err.c_str());
  for (double attained : {100.0, 5000.0, 20000.0}) {
    run.run_s = run.attained_gpu_s = attained;
    const std::vector<JobInfo> jobs = {run, wait};
    CK_OK(g->score_queue(jobs, cluster(1), scores, &err), err);
    if (attained < 10000)
      ck_assert_msg(scores[0] > scores[1], "running job at %g s: %g, pending: %g", attained, scores[0], scores[1]);
    else
      ck_assert_msg(scores[0] < scores[1], "running job at %g s: %g, pending: %g", attained, scores[0], scores[1]);
  }
}
END_TEST

START_TEST(test_model_load_errors) {
  DuetConf c = model_conf();
  std::string garbage(4096, '\x5a');
  c.model_path = c.placement_model_path = write_file("corrupt.model", garbage);
  std::string err;
  ck_assert(make_order_scorer(c, &err) == nullptr);
  ck_assert_msg(err.find("ModelPath " + c.model_path + ": ") == 0, "%s", err.c_str());
  std::vector<std::string> errors;
  PlacementAgent a = make_placement_agent(c, &errors);
  ck_assert(a.ranker == nullptr);
  ck_assert_uint_eq(errors.size(), 1);
  ck_assert_msg(errors[0].find("PlacementModelPath " + c.model_path + ": ") == 0, "%s", errors[0].c_str());
  // a bad NodeSpeedsFile names itself
  c = model_conf();
  c.node_speeds_file = write_file("bad-speeds.csv", "node,speed\nnode1,fast\n");
  errors.clear();
  a = make_placement_agent(c, &errors);
  ck_assert(a.ranker == nullptr);
  ck_assert_msg(
      errors.size() == 1 &&
          errors[0].find("bad-speeds.csv:2:7: field 'speed': expected a number, got 'fast'") != std::string::npos,
      "%s", errors.empty() ? "" : errors[0].c_str());
}
END_TEST

namespace {

// make_order_scorer in a child with a 10 s deadline (the suite runs without
// fork: a FIFO that blocks the loader would hang it): its error, or "HUNG".
std::string scorer_error_in_child(const DuetConf& c) {
  return test_support::in_child([&] {
    std::string err;
    auto s = make_order_scorer(c, &err);
    if (s) err = "LOADED";
    return err;
  });
}

std::string copy_model(const std::string& path) {
  std::ifstream in(model_file(), std::ios::binary);
  std::ofstream(path, std::ios::binary) << in.rdbuf();
  return path;
}

}  // namespace

// A FIFO or a device as ModelPath is refused at once (the readability check
// opened it blocking: a FIFO hung slurmctld's plugin load).
START_TEST(test_model_special_files_refused) {
  DuetConf c = model_conf();
  const std::string fifo = g_dir + "/fifo.model";
  ck_assert_int_eq(mkfifo(fifo.c_str(), 0600), 0);
  c.model_path = fifo;
  std::string err = scorer_error_in_child(c);
  CK_STR_EQ(err, "ModelPath " + fifo + ": is a FIFO, expected a regular file (duet model file)");
  c.model_path = "/dev/zero";
  err = scorer_error_in_child(c);
  CK_STR_EQ(err, "ModelPath /dev/zero: is a character device, expected a regular file (duet model file)");
  unlink(fifo.c_str());
}
END_TEST

// With trusted_uid (slurmctld: SlurmUser), a model or speeds file others can
// change is refused with one line naming the file and the cause, and the
// plugins fall back (before: loaded without a word).
START_TEST(test_untrusted_files_refused) {
  const uint32_t me = static_cast<uint32_t>(geteuid());
  const std::string tail = "; only root and SlurmUser (uid " + std::to_string(me) + ") may be able to change it";
  DuetConf c = model_conf();
  c.trusted_uid = me;
  std::string err;
  ck_assert_msg(make_order_scorer(c, &err) != nullptr, "a trusted model was refused: %s", err.c_str());

  const std::string ww = copy_model(g_dir + "/world-writable.model");
  ck_assert_int_eq(chmod(ww.c_str(), 0666), 0);
  c.model_path = c.placement_model_path = ww;
  ck_assert(make_order_scorer(c, &err) == nullptr);
  CK_STR_EQ(err, "ModelPath " + ww + ": refused: the file is writable by others (mode 0666)" + tail);
  std::vector<std::string> errors;
  PlacementAgent a = make_placement_agent(c, &errors);
  ck_assert(a.ranker == nullptr && errors.size() == 1);
  CK_STR_EQ(errors[0], "PlacementModelPath " + ww + ": refused: the file is writable by others (mode 0666)" + tail);
  ck_assert_int_eq(chmod(ww.c_str(), 0620), 0);
  ck_assert(make_order_scorer(c, &err) == nullptr);
  ck_assert_msg(err.find(": refused: the file is writable by group ") != std::string::npos, "%s", err.c_str());

  // a directory others may write (no sticky bit) lets them swap the file
  const std::string open_dir = g_dir + "/open";
  ck_assert_int_eq(mkdir(open_dir.c_str(), 0755), 0);
  ck_assert_int_eq(chmod(open_dir.c_str(), 0777), 0);
  c.model_path = copy_model(open_dir + "/m.model");
  ck_assert(make_order_scorer(c, &err) == nullptr);
  CK_STR_EQ(err, "ModelPath " + c.model_path + ": refused: its directory " + open_dir +
                     " is writable by others (mode 0777)" + tail);
  ck_assert_int_eq(chmod(open_dir.c_str(), 01777), 0);  // sticky, as /tmp: others cannot replace it
  ck_assert_msg(make_order_scorer(c, &err) != nullptr, "%s", err.c_str());
  if (me == 0) {  // only root can give a file away
    ck_assert_int_eq(chown(c.model_path.c_str(), 4242, 0), 0);
    ck_assert(make_order_scorer(c, &err) == nullptr);
    CK_STR_EQ(err, "ModelPath " + c.model_path + ": refused: the file is owned by uid 4242" + tail);
  }

  // the node speeds file too
  c = model_conf();
  c.trusted_uid = me;
  c.node_speeds_file = write_file("ww-speeds.csv", "node,speed\nnode1,1\n");
  ck_assert_int_eq(chmod(c.node_speeds_file.c_str(), 0646), 0);
  errors.clear();
  a = make_placement_agent(c, &errors);
  ck_assert(a.ranker == nullptr && errors.size() == 1);
  CK_STR_EQ(errors[0],
            "NodeSpeedsFile " + c.node_speeds_file + ": refused: the file is writable by others (mode 0646)" + tail);

  // without trusted_uid (tools, tests) no ownership check
  c = model_conf();
  c.model_path = ww;
  ck_assert_int_eq(chmod(ww.c_str(), 0666), 0);
  ck_assert_msg(make_order_scorer(c, &err) != nullptr, "%s", err.c_str());
}
END_TEST

// Node speeds outside 1e-3..1e3 are refused with file and line.
START_TEST(test_node_speeds_range) {
  DuetConf c = model_conf();
  for (const char* bad : {"1e308", "4.9e-324", "0", "0x10", "inf"}) {
    c.node_speeds_file = write_file("range-speeds.csv", std::string("node,speed\nnode1,1\nnode2,") + bad + "\n");
    std::vector<std::string> errors;
    PlacementAgent a = make_placement_agent(c, &errors);
    ck_assert(a.ranker == nullptr && errors.size() == 1);
    // out of range or not a finite number at all (0x10, inf): either way, the field and what it held
    ck_assert_msg(errors[0].find("range-speeds.csv:3:7: field 'speed': expected a number") != std::string::npos &&
                      errors[0].find("got '" + std::string(bad) + "'") != std::string::npos,
                  "%s", errors[0].c_str());
  }
}
END_TEST

START_TEST(test_placement_agent_ranks_learns_and_restores) {
  std::vector<std::string> errors;
  PlacementAgent a = make_placement_agent(model_conf(), &errors);
  ck_assert_msg(a.ranker && a.observer, "%s", errors.empty() ? "" : errors[0].c_str());
  ck_assert_uint_eq(errors.size(), 0);
  CK_STR_EQ(a.observer->name(), "rwgp");
  const std::string want = "model(cksum " + std::to_string(expected_crc()) + ", format 1)";
  CK_STR_EQ(a.ranker->name(), want);

  const ClusterInfo c = cluster();
  const JobInfo j = job(10, 1, 0, "duet:ref=100;type=ResNet-50 (batch size 32)");
  std::vector<double> pref;
  std::string why, err;
  CK_OK(a.ranker->rank(j, c, pref, &why, &err), err);
  ck_assert_uint_eq(pref.size(), 4);
  for (double x : pref) ck_assert(std::isfinite(x));
  ck_assert_msg(why.find(want + ": best node") == 0, "%s", why.c_str());

  // node2 ran 2x slower than its known speed (1.5), as slurmctld measured
  // against the same user's runs on node1: its estimate and GP mean drop
  // (by 0.10: one user's limit per node and hour), and so does its
  // preference relative to before
  a.observer->set_cluster(c);
  const std::string empty = a.observer->summary();
  ck_assert_msg(empty.find("0 runs measured, 0 moves") == 0, "%s", empty.c_str());
  teach(*a.observer, "node2", 1.5, 0.5, 1001, 1000, 5);
  JobOutcome first{job(11, 1, 0), {"node1"}, 10, true, 2000};  // no runs to compare with: nothing learned
  a.observer->observe(first);
  JobOutcome claimed{job(12, 1, 0, "duet:ref=1e300;type=ResNet-50 (batch size 32)"), {"node3"}, 10, true, 2001};
  a.observer->observe(claimed);  // a claimed ref= is no expectation either
  const std::string learned = a.observer->summary();
  ck_assert_msg(learned.find("9 runs measured, 2 moves in the last hour") == 0, "%s", learned.c_str());
  ck_assert_double_eq_tol(summary_field(learned, "node2", "est"), -0.10, 1e-9);
  ck_assert(summary_field(learned, "node2", "mu") < 0);
  ck_assert(summary_field(learned, "node3", "est") == 0);
  std::vector<double> pref2;
  CK_OK(a.ranker->rank(j, c, pref2, &why, &err), err);
  ck_assert(pref2[1] - pref2[0] < pref[1] - pref[0]);

  // save -> a fresh agent restores the same posterior (before and after it
  // learns the node list)
  const std::string saved = a.observer->save();
  PlacementAgent b = make_placement_agent(model_conf(), &errors);
  CK_OK(b.observer->restore(saved, &err), err);
  b.observer->set_cluster(c);
  CK_STR_EQ(b.observer->summary(), learned);
  PlacementAgent d = make_placement_agent(model_conf(), &errors);
  d.observer->set_cluster(c);
  CK_OK(d.observer->restore(saved, &err), err);
  CK_STR_EQ(d.observer->summary(), learned);
  // a node that left: no longer in the GP; the rest kept
  ClusterInfo smaller = c;
  smaller.nodes.erase(smaller.nodes.begin() + 1);
  d.observer->set_cluster(smaller);
  ck_assert_msg(d.observer->summary().find(" node2:") == std::string::npos, "%s", d.observer->summary().c_str());
  // garbage state is refused with the line number
  ck_assert(!d.observer->restore("est node1 zero\n", &err));
  ck_assert_msg(err.find("line 1: expected") == 0, "%s", err.c_str());
  // the GP window of duet before issue 52 (learned from users' claimed ref=)
  // is dropped, not restored
  PlacementAgent old = make_placement_agent(model_conf(), &errors);
  old.observer->set_cluster(c);
  CK_OK(old.observer->restore("model m\nobs 4 -2 node2\nobs 4 2 node4\nsum 4 -8 4 node2\n", &err), err);
  ck_assert_msg(old.observer->summary().find("0 runs measured, 0 moves") == 0, "%s", old.observer->summary().c_str());
  ck_assert(summary_field(old.observer->summary(), "node2", "mu") == 0);
}
END_TEST

// Issue 52: user 65534's short jobs, four with ref=1e-300 pinned to node2
// and four with ref=1e300 pinned to node4 (the audit's), then as slow as they
// like on node2 and as fast on node4 (what a user can still do): no node's
// robust estimate moves by more than 0.10 and no GP mean by more than 0.20
// (SpeedLimits; the GP is a contraction of the estimates), and another
// user's 1-GPU job still prefers node2, the fastest.
START_TEST(test_hostile_jobs_move_the_gp_by_at_most_the_bound) {
  std::vector<std::string> errors;
  PlacementAgent a = make_placement_agent(model_conf(), &errors);
  ck_assert_msg(a.ranker && a.observer, "%s", errors.empty() ? "" : errors[0].c_str());
  const ClusterInfo c = cluster();
  a.observer->set_cluster(c);
  const JobInfo victim = job(10, 1, 0);
  std::vector<double> before, after;
  std::string why, err;
  CK_OK(a.ranker->rank(victim, c, before, &why, &err), err);
  ck_assert_uint_eq(order_of(before)[0], 1);  // node2
  const std::string s0 = a.observer->summary();
  JobInfo h = job(20, 1, 0);
  h.user_id = 65534;
  h.name = "x";
  int64_t t = 1700000000;
  for (int round = 0; round < 3; ++round) {
    h.comment = "duet:ref=1e300;type=ResNet-50 (batch size 32)";
    for (int k = 0; k < 4; ++k) a.observer->observe(JobOutcome{h, {"node4"}, 1, true, t++});
    h.comment = "duet:ref=1e-300;type=ResNet-50 (batch size 32)";
    for (int k = 0; k < 4; ++k) a.observer->observe(JobOutcome{h, {"node2"}, 3600, true, t++});
  }
  const std::string s1 = a.observer->summary();
  for (const char* n : {"node1", "node2", "node3", "node4"}) {
    const double d = std::abs(summary_field(s1, n, "mu") - summary_field(s0, n, "mu"));
    ck_assert_msg(d <= 0.20 + 1e-9, "%s's GP mean moved by %g: %s -> %s", n, d, s0.c_str(), s1.c_str());
  }
  double moved = 0;
  for (const char* n : {"node1", "node2", "node3", "node4"}) moved += std::abs(summary_field(s1, n, "est"));
  ck_assert_msg(moved <= 0.20 + 1e-9, "estimates moved by %g in sum: %s", moved, s1.c_str());
  CK_OK(a.ranker->rank(victim, c, after, &why, &err), err);
  ck_assert_msg(order_of(after)[0] == 1, "the victim's best node is now node%zu: %s", order_of(after)[0] + 1,
                why.c_str());
}
END_TEST

// A job no node holds alone runs at its slowest node's speed: the nodes below
// the fastest known-speed floor that holds it go last, even where the learned
// preference puts one of them above a node at the floor.
// JobTypeSpeedsFile: a job whose comment names a Gavel job type is ranked by
// its type's speeds, as the simulator's learned placement ranks it. node1
// (V100) is the faster by the known speeds; node3 (K80) is the faster for a
// job type that K80 suits better than the mean job does.
START_TEST(test_placement_job_type_speeds) {
  const std::string gavel = test_support::source_path("data/gavel/simulation_throughputs.json");
  const duet::JobTypeSpeeds speeds = duet::job_type_speeds(test_support::gavel_table());
  const int k80 = test_support::gavel_table().find_gpu("k80"), v100 = test_support::gavel_table().find_gpu("v100");
  std::string type;
  double r = 0;  // the type's factor on K80 over its factor on V100, the largest
  for (const auto& [name, a] : speeds.affinity)
    if (a[k80] / a[v100] > r) r = a[k80] / a[v100], type = name;
  ck_assert_msg(r > 2, "no job type suits K80 twice as well as V100 (%g)", r);
  DuetConf c = model_conf();
  c.node_speeds_file = write_file("type-speeds.csv", "node,speed\nnode1,1\nnode2,0.05\nnode3," +
                                                         std::to_string(1 / std::sqrt(r)) + "\nnode4,0.05\n");
  std::vector<std::string> errors;
  PlacementAgent blind = make_placement_agent(c, &errors);
  c.job_type_speeds_file = gavel;
  PlacementAgent typed = make_placement_agent(c, &errors);
  ck_assert_msg(blind.ranker && typed.ranker && errors.empty(), "%s", errors.empty() ? "" : errors[0].c_str());
  const ClusterInfo cl = cluster();
  std::vector<double> pb, pt, pu;
  std::string why, err;
  const JobInfo j = job(50, 1, 0, "duet:ref=100;type=" + type);
  CK_OK(blind.ranker->rank(j, cl, pb, &why, &err), err);
  CK_OK(typed.ranker->rank(j, cl, pt, &why, &err), err);
  ck_assert_msg(why.find("best node3 (its type's speed") != std::string::npos, "%s", why.c_str());
  ck_assert_msg(pb[0] > pb[2] && pt[2] > pt[0], "blind %g %g, typed %g %g", pb[0], pb[2], pt[0], pt[2]);
  CK_OK(typed.ranker->rank(job(51, 1, 0, "duet:type=no such type"), cl, pu, &why, &err), err);
  ck_assert(pu[0] > pu[2]);  // an unknown type: the known speeds
  // a bad table names the key and where the file is wrong
  c.job_type_speeds_file = write_file("bad-gavel.json", "{\"v100\": [1,\n");
  errors.clear();
  ck_assert(make_placement_agent(c, &errors).ranker == nullptr);
  ck_assert_msg(errors.size() == 1 && errors[0].find("JobTypeSpeedsFile ") != std::string::npos &&
                    errors[0].find("bad-gavel.json:2:") != std::string::npos,
                "%s", errors.empty() ? "" : errors[0].c_str());
}
END_TEST

START_TEST(test_placement_spread_job_speed_floor) {
  std::vector<std::string> errors;
  PlacementAgent a = make_placement_agent(model_conf(), &errors);
  ck_assert_msg(a.ranker && a.observer, "%s", errors.empty() ? "" : errors[0].c_str());
  ClusterInfo c = cluster();
  const uint32_t alloc[4] = {2, 3, 2, 2};  // free: node1 2, node2 1, node3 2, node4 2
  for (int i = 0; i < 4; ++i) c.nodes[i].gpus_alloc = alloc[i], c.nodes[i].jobs_running = 1;
  // node1 (known 0.5) ran 5x slower than that for three users over two
  // hours: the GP now ranks it below the K80s (node3 0.4, node4 0.45) for
  // jobs that fit on one node
  a.observer->set_cluster(c);
  const std::string type = "duet:ref=100;type=ResNet-50 (batch size 32)";
  for (uint32_t hour = 0; hour < 2; ++hour)  // three other users each hour: each one's own runs only
    for (uint32_t u = 0; u < 3; ++u) teach(*a.observer, "node1", 0.5, 0.2, 1000 + 3 * hour + u, hour * 4000 + 10 * u, 2);
  ck_assert_double_eq_tol(summary_field(a.observer->summary(), "node1", "est"), -0.6, 1e-9);
  std::vector<double> one, spread;
  std::string why, err;
  CK_OK(a.ranker->rank(job(30, 2, 0, type), c, one, &why, &err), err);
  ck_assert_msg(one[0] < one[3], "node1 %g, node4 %g", one[0], one[3]);
  // 3 GPUs: no node has them; node2 (1.5) and node1 (0.5) do together, so
  // the K80s go last. (A job that waited out the one-machine floor: else
  // only node2, at least half of 1.5, would be a candidate.)
  CK_OK(a.ranker->rank(job(31, 3, duet::learn::kOneMachineFloorMaxWaitS, type), c, spread, &why, &err), err);
  ck_assert_msg(spread[2] < spread[0] && spread[3] < spread[0] && spread[2] < spread[1] && spread[3] < spread[1],
                "node1 %g node2 %g node3 %g node4 %g", spread[0], spread[1], spread[2], spread[3]);
}
END_TEST

// select/duet follows the model's spread rule (duet-model(5), format 3) for a
// job no node holds alone: 3 GPUs, free on node1 (0.5) 2, node2 (1.5) 1,
// node3 (0.4) 2, node4 (0.45) 2, so the fastest floor is 0.5. The job waited
// out the one-machine floor (else it keeps to node2 alone).
START_TEST(test_placement_spread_rule_of_the_model) {
  auto ranks = [](duet::learn::SpreadSets rule) {
    duet::learn::Model m = duet::learn::load_model(model_file());
    m.spread = rule;
    DuetConf c = model_conf();
    c.model_path = c.placement_model_path = g_dir + "/spread-" + duet::learn::spread_sets_name(rule) + ".model";
    duet::learn::save_model(m, c.placement_model_path);
    std::vector<std::string> errors;
    PlacementAgent a = make_placement_agent(c, &errors);
    ck_assert_msg(a.ranker, "%s", errors.empty() ? "" : errors[0].c_str());
    ClusterInfo cl = cluster();
    const uint32_t alloc[4] = {2, 3, 2, 2};
    for (int i = 0; i < 4; ++i) cl.nodes[i].gpus_alloc = alloc[i], cl.nodes[i].jobs_running = 1;
    std::vector<double> p;
    std::string why, err;
    CK_OK(a.ranker->rank(job(40, 3, duet::learn::kOneMachineFloorMaxWaitS), cl, p, &why, &err), err);
    return p;
  };
  const std::vector<double> fastest = ranks(duet::learn::SpreadSets::fastest);
  const std::vector<double> tight = ranks(duet::learn::SpreadSets::tight);
  const std::vector<double> slow = ranks(duet::learn::SpreadSets::slow);
  const std::vector<double> learned = ranks(duet::learn::SpreadSets::learned);
  // fastest: the 1.5 before the 0.5, the K80s below the floor last
  ck_assert_msg(fastest[1] > fastest[0] && fastest[0] > fastest[2] && fastest[0] > fastest[3], "fastest: %g %g %g %g",
                fastest[0], fastest[1], fastest[2], fastest[3]);
  // tight: the same floor, the slowest node at it first
  ck_assert_msg(tight[0] > tight[1] && tight[1] > tight[2] && tight[1] > tight[3], "tight: %g %g %g %g", tight[0],
                tight[1], tight[2], tight[3]);
  // slow: no floor, the slowest first
  ck_assert_msg(slow[2] > slow[3] && slow[3] > slow[0] && slow[0] > slow[1], "slow: %g %g %g %g", slow[0], slow[1],
                slow[2], slow[3]);
  // learned, untrained: its first node's prior peaks at the floor, so node1 leads, as tight
  ck_assert_msg(learned[0] > learned[1] && learned[1] > learned[2] && learned[1] > learned[3], "learned: %g %g %g %g",
                learned[0], learned[1], learned[2], learned[3]);
}
END_TEST

// The ordering agent reads the placement agent's message from its channel:
// none (or one of the wrong width) scores as unconnected; a non-zero one
// changes the scores (the model's listening weights are non-zero, see
// listen_to_messages). A queue re-score publishes each job's message.
START_TEST(test_ordering_agent_messages) {
  std::string err;
  auto plain = make_order_scorer(model_conf(), &err);
  auto s = make_order_scorer(model_conf(), &err);
  ck_assert_msg(plain && s, "%s", err.c_str());
  AgentChannel ch;
  s->connect(&ch);
  std::vector<JobInfo> jobs = {job(1, 1, 60), job(2, 8, 3600, "duet:ref=100;type=ResNet-50 (batch size 32)"),
                               job(3, 2, 5), job(4, 4, 0)};
  std::vector<double> base(jobs.size()), scores(jobs.size());
  CK_OK(plain->score(jobs, cluster(2), base, &err), err);
  ck_assert(!plain->used_placement_message());
  CK_OK(s->score(jobs, cluster(2), scores, &err), err);  // nothing published: zeros
  for (size_t i = 0; i < jobs.size(); ++i) ck_assert_double_eq(scores[i], base[i]);
  ck_assert(!s->used_placement_message());
  ck_assert_uint_eq(ch.order_publications(), 0);  // score() alone publishes nothing

  const std::vector<float> wrong = {0.5f, 0.5f};  // another model's width: ignored
  ch.publish_placement_message(wrong);
  CK_OK(s->score(jobs, cluster(2), scores, &err), err);
  for (size_t i = 0; i < jobs.size(); ++i) ck_assert_double_eq(scores[i], base[i]);

  const std::vector<float> pmsg = {0.9f, -0.8f, 0.7f, -0.6f};
  ch.publish_placement_message(pmsg);
  CK_OK(s->score(jobs, cluster(2), scores, &err), err);
  ck_assert(s->used_placement_message());
  size_t changed = 0;
  for (size_t i = 0; i < jobs.size(); ++i) {
    ck_assert(std::isfinite(scores[i]));
    changed += scores[i] != base[i];
  }
  ck_assert_msg(changed == jobs.size(), "only %zu of %zu scores changed with a placement message", changed,
                jobs.size());

  // a queue pass: the same scores, and one non-zero message per job, by id
  std::vector<double> queue(jobs.size());
  CK_OK(s->score_queue(jobs, cluster(2), queue, &err), err);
  for (size_t i = 0; i < jobs.size(); ++i) ck_assert_double_eq(queue[i], scores[i]);
  ck_assert_uint_eq(ch.order_message_count(), jobs.size());
  std::vector<float> m1, m2;
  ck_assert(ch.order_message(1, m1) && ch.order_message(2, m2));
  ck_assert_uint_eq(m1.size(), 4);
  bool nonzero = false;
  for (float x : m1) {
    ck_assert(std::isfinite(x));
    nonzero = nonzero || x != 0;
  }
  ck_assert(nonzero);
  ck_assert(m1 != m2);
  // the next pass replaces the set: job 1 started
  CK_OK(
      s->score_queue(std::span<const JobInfo>(jobs).subspan(1), cluster(2), std::span<double>(queue).subspan(1), &err),
      err);
  ck_assert_uint_eq(ch.order_message_count(), jobs.size() - 1);
  ck_assert(!ch.order_message(1, m1) && m1.empty());
  // an empty queue leaves no messages
  CK_OK(s->score_queue({}, cluster(2), {}, &err), err);
  ck_assert_uint_eq(ch.order_message_count(), 0);
}
END_TEST

// The placement agent publishes its message (a generic 1-GPU job over the
// usable GPU nodes) when ranking, again when the GP learns, and ranks a job
// with the ordering agent's message for that job.
START_TEST(test_placement_agent_messages) {
  std::vector<std::string> errors;
  PlacementAgent plain = make_placement_agent(model_conf(), &errors);
  PlacementAgent a = make_placement_agent(model_conf(), &errors);
  ck_assert_msg(plain.ranker && a.ranker && a.observer, "%s", errors.empty() ? "" : errors[0].c_str());
  AgentChannel ch;
  a.ranker->connect(&ch);
  const ClusterInfo c = cluster();
  const JobInfo j = job(10, 1, 0, "duet:ref=100;type=ResNet-50 (batch size 32)");
  std::vector<double> base, pref;
  std::string why, err;
  CK_OK(plain.ranker->rank(j, c, base, &why, &err), err);
  CK_OK(a.ranker->rank(j, c, pref, &why, &err), err);  // no ordering message yet: zeros
  ck_assert(pref == base);
  ck_assert_msg(why.find("ordering agent's message") == std::string::npos, "%s", why.c_str());

  std::vector<float> msg;
  ck_assert(ch.placement_message(msg));
  ck_assert_uint_eq(msg.size(), 4);
  bool nonzero = false;
  for (float x : msg) {
    ck_assert(std::isfinite(x) && std::abs(x) <= 1);  // tanh
    nonzero = nonzero || x != 0;
  }
  ck_assert(nonzero);
  // nothing changed: ranking again publishes nothing new
  const uint64_t pubs = ch.placement_publications();
  CK_OK(a.ranker->rank(j, c, pref, &why, &err), err);
  ck_assert_uint_eq(ch.placement_publications(), pubs);
  // the occupancy changed: a new message
  CK_OK(a.ranker->rank(j, cluster(3), pref, &why, &err), err);
  ck_assert_uint_eq(ch.placement_publications(), pubs + 1);
  std::vector<float> busy;
  ck_assert(ch.placement_message(busy) && busy != msg);
  // the GP learned (observe after set_cluster, as select/duet does): a new
  // message at each of the two moves (runs that teach nothing publish none)
  a.observer->set_cluster(c);
  teach(*a.observer, "node2", 1.5, 0.5, 1001, 5000, 3);
  ck_assert_uint_eq(ch.placement_publications(), pubs + 3);
  std::vector<float> learned;
  ck_assert(ch.placement_message(learned) && learned != msg && learned != busy);

  // the ordering agent's message for this job changes its node preferences;
  // another job's message does not
  const std::vector<uint32_t> other = {11};
  const std::vector<float> omsg = {0.9f, -0.9f, 0.8f, -0.7f};
  ch.publish_order_messages(other, omsg, 4);
  std::vector<double> before, with;
  CK_OK(a.ranker->rank(j, c, before, &why, &err), err);
  const std::vector<uint32_t> mine = {10};
  ch.publish_order_messages(mine, omsg, 4);
  CK_OK(a.ranker->rank(j, c, with, &why, &err), err);
  ck_assert_msg(why.find("ordering agent's message used") != std::string::npos, "%s", why.c_str());
  size_t changed = 0;
  for (size_t i = 0; i < with.size(); ++i) {
    ck_assert(std::isfinite(with[i]));
    changed += with[i] != before[i];
  }
  ck_assert_uint_eq(changed, with.size());
  // a message of another width is ignored (zeros)
  const std::vector<float> wrong = {1, 1};
  ch.publish_order_messages(mine, wrong, 2);
  CK_OK(a.ranker->rank(j, c, with, &why, &err), err);
  ck_assert(with == before);
}
END_TEST

// Both agents on one channel, as in slurmctld: the ordering agent's scores
// move once the placement agent has ranked (and so published).
START_TEST(test_agents_talk) {
  std::string err;
  std::vector<std::string> errors;
  auto s = make_order_scorer(model_conf(), &err);
  PlacementAgent p = make_placement_agent(model_conf(), &errors);
  ck_assert(s && p.ranker);
  AgentChannel ch;
  s->connect(&ch);
  p.ranker->connect(&ch);
  std::vector<JobInfo> jobs = {job(21, 1, 60), job(22, 2, 600)};
  std::vector<double> before(2), after(2), pref;
  CK_OK(s->score_queue(jobs, cluster(1), before, &err), err);
  ck_assert(!s->used_placement_message());
  std::string why;
  CK_OK(p.ranker->rank(jobs[0], cluster(1), pref, &why, &err), err);
  ck_assert_msg(why.find("ordering agent's message used") != std::string::npos, "%s", why.c_str());
  CK_OK(s->score_queue(jobs, cluster(1), after, &err), err);
  ck_assert(s->used_placement_message());
  ck_assert(after[0] != before[0] && after[1] != before[1]);
}
END_TEST

int main() {
  char tmpl[] = "/tmp/check_plugin_learned.XXXXXX";
  if (!mkdtemp(tmpl)) return 99;
  g_dir = tmpl;
  // as the plugins do where they start (ordering_host.cc, select_duet.cc)
  duet::plugin::register_ordering_agent();
  duet::plugin::register_placement_agent();
  Suite* s = suite_create("plugin_learned");
  TCase* tc = tcase_create("core");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, test_job_hints);
  tcase_add_test(tc, test_preemptive_ordering_agent);
  tcase_add_test(tc, test_cksum_matches_posix);
  tcase_add_test(tc, test_ordering_agent_scores);
  tcase_add_test(tc, test_model_load_errors);
  tcase_add_test(tc, test_placement_agent_ranks_learns_and_restores);
  tcase_add_test(tc, test_hostile_jobs_move_the_gp_by_at_most_the_bound);
  tcase_add_test(tc, test_placement_job_type_speeds);
  tcase_add_test(tc, test_placement_spread_job_speed_floor);
  tcase_add_test(tc, test_placement_spread_rule_of_the_model);
  tcase_add_test(tc, test_ordering_agent_messages);
  tcase_add_test(tc, test_placement_agent_messages);
  tcase_add_test(tc, test_agents_talk);
  tcase_add_test(tc, test_model_special_files_refused);
  tcase_add_test(tc, test_untrusted_files_refused);
  tcase_add_test(tc, test_node_speeds_range);
  suite_add_tcase(s, tc);
  SRunner* sr = srunner_create(s);
  srunner_set_fork_status(sr, CK_NOFORK);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  std::system(("rm -rf '" + g_dir + "'").c_str());
  return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
