// duet-emujob's pieces: hostlists, nodes.csv, the live registry, and the
// emulated rate agreeing with the simulator's PerfModel.
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "policy/io/cluster.h"
#include "policy/io/csv.h"
#include "policy/model/gavel.h"
#include "policy/model/cluster_model.h"
#include "policy/model/perf_model.h"
#include "replay/emu_checkpoint.h"
#include "replay/emu_nodes.h"
#include "replay/emu_rate.h"
#include "replay/emu_registry.h"
#include "tests/unit/test_data.h"

// Last: check.h defines a fail() macro that breaks <ios>.
#include <check.h>
#include "tests/unit/run_suite.h"

using namespace duet;
using namespace duet::replay;
using test_support::gavel_table;

START_TEST(hostlists) {
  auto v = expand_hostlist("node[1-3,7],gpu[08-10]x,solo");
  ck_assert_int_eq(v.size(), 8);
  ck_assert_str_eq(v[0].c_str(), "node1");
  ck_assert_str_eq(v[3].c_str(), "node7");
  ck_assert_str_eq(v[4].c_str(), "gpu08x");
  ck_assert_str_eq(v[6].c_str(), "gpu10x");
  ck_assert_str_eq(v[7].c_str(), "solo");
  v = expand_hostlist("r[1-2]n[01-02]");  // more than one bracket group, as Slurm prints them
  ck_assert_int_eq(v.size(), 4);
  ck_assert_str_eq(v[1].c_str(), "r1n02");
  // Hostile lists fail with invalid_argument: a number no integer
  // holds (std::out_of_range escaped before), 10^10 names from 20 bytes,
  // 17 bracket groups, a range over 100,000 numbers.
  const std::string groups17 = [] {
    std::string g = "n";
    for (int i = 0; i < 17; ++i) g += "[1]";
    return g;
  }();
  for (const std::string& bad : {std::string("node[1-"), std::string("node[a]"), std::string("node[3-1]"),
                                 std::string("a,"), std::string("n[99999999999999999999]"),
                                 std::string("a[0-99999]b[0-99999]"), groups17, std::string("n[0-100001]")}) {
    bool threw = false;
    try {
      expand_hostlist(bad);
    } catch (const std::invalid_argument&) { threw = true; }
    ck_assert_msg(threw, "%s accepted", bad.c_str());
  }
}
END_TEST

START_TEST(nodes_csv) {
  char d[] = "/tmp/duet-check-emu-XXXXXX";
  ck_assert(mkdtemp(d));
  std::string f = std::string(d) + "/nodes.csv";
  std::ofstream(f) << "node,gpu_type,num_gpus,speed\nnode1,v100,4,1.0\nnode2,k80,4,0.5\n";
  auto n = read_nodes_csv(f);
  ck_assert_int_eq(n.size(), 2);
  ck_assert_double_eq(n[1].speed, 0.5);
  std::ofstream(f) << "node,gpu_type,num_gpus,speed\nnode1,v100,4,-1\n";
  std::string e;
  try {
    read_nodes_csv(f);
  } catch (const InputError& x) { e = x.what(); }
  ck_assert_msg(e.find("nodes.csv:2:") != std::string::npos && e.find("speed") != std::string::npos, "%s", e.c_str());
  std::filesystem::remove_all(d);
}
END_TEST

START_TEST(registry_ignores_dead) {
  char d[] = "/tmp/duet-check-emu-XXXXXX";
  ck_assert(mkdtemp(d));
  EmuRegistry a(d), b(d);
  a.enter({"node1", "node2"}, "7", getpid(), "ResNet-50 (batch size 32)");
  pid_t child = fork();
  if (child == 0) _exit(0);
  waitpid(child, nullptr, 0);  // a pid that is certainly gone
  b.enter({"node1"}, "8", child, "LM (batch size 5)");
  auto seen = EmuRegistry(d).on_node("node1", 1);
  ck_assert_int_eq(seen.size(), 1);
  ck_assert_str_eq(seen[0].job_type.c_str(), "ResNet-50 (batch size 32)");
  ck_assert_int_eq(EmuRegistry(d).on_node("node1", getpid()).size(), 0);
  a.leave();
  ck_assert_int_eq(EmuRegistry(d).on_node("node2", 1).size(), 0);
  std::filesystem::remove_all(d);
}
END_TEST

// What a preempted run saves is what the run after its requeue reads back;
// a malformed file is refused with its path and line, never taken as 0 left.
START_TEST(checkpoint_round_trip) {
  char d[] = "/tmp/duet-check-ckpt-XXXXXX";
  ck_assert(mkdtemp(d));
  const std::string path = checkpoint_path(std::string(d) + "/sub", "42");
  ck_assert(!read_checkpoint(path).has_value());
  write_checkpoint(path, 123.25);
  ck_assert_double_eq_tol(*read_checkpoint(path), 123.25, 1e-6);
  write_checkpoint(path, 7);
  ck_assert_double_eq_tol(*read_checkpoint(path), 7, 1e-6);
  ck_assert_int_eq(std::distance(std::filesystem::directory_iterator(std::string(d) + "/sub"), {}), 1);  // no tmp left
  for (const char* bad : {"", "work_left\n", "work_left -3\n", "work_left nan\n", "left 5\n", "work_left 5 6\n"}) {
    std::ofstream(path, std::ios::trunc) << bad;
    std::string e;
    try {
      read_checkpoint(path);
    } catch (const std::exception& x) { e = x.what(); }
    ck_assert_msg(e.find(path + ":1: expected 'work_left SECONDS'") != std::string::npos, "'%s': %s", bad, e.c_str());
  }
  remove_checkpoint(path);
  ck_assert(!read_checkpoint(path).has_value());
  remove_checkpoint(path);  // gone already: fine
  for (const char* id : {"", "..", "a/b"}) {
    bool threw = false;
    try {
      checkpoint_path(d, id);
    } catch (const std::exception&) { threw = true; }
    ck_assert_msg(threw, "job id '%s' accepted", id);
  }
  std::filesystem::remove_all(d);
}
END_TEST

// With no variability, PerfModel's rate x the node factor is the emulated rate.
START_TEST(rate_matches_perf_model) {
  ThroughputTable t = gavel_table();
  ClusterSpec spec;
  spec.machines = {{"m0", "v100", 4, "r", -1, 2}, {"m1", "k80", 4, "r", -1, 3}, {"m2", "p100", 4, "r", -1, 4}};
  ClusterModel cm = build_cluster(spec, t);
  ModelOptions o;
  o.variability = {0, 0, 0};
  PerfModel pm(t, cm, o);
  const int jt = 0, other = 1 % t.job_types();
  pm.add_job(0, jt);
  pm.add_job(0, other);
  pm.add_job(1, jt);
  PlacementPart p0{0, 4}, p1{1, 4};
  std::vector<PlacementPart> two = {p0, p1};
  EmuPart e0{t.find_gpu("v100"), 1.0, "r", {other}}, e1{t.find_gpu("k80"), 1.0, "r", {}};
  ck_assert_double_eq_tol(emulated_rate(t, jt, 4, {e0}), pm.rate(jt, 4, std::span(two).first(1)), 1e-12);
  ck_assert_double_eq_tol(emulated_rate(t, jt, 8, {e0, e1}), pm.rate(jt, 8, two), 1e-12);
  // a node factor of 0.5 halves the rate of a job alone
  EmuPart slow{t.find_gpu("v100"), 0.5, "", {}}, fast{t.find_gpu("v100"), 1.0, "", {}};
  ck_assert_double_eq_tol(emulated_rate(t, jt, 1, {slow}), 0.5 * emulated_rate(t, jt, 1, {fast}), 1e-12);
}
END_TEST

int main() {
  Suite* s = suite_create("replay_emujob");
  TCase* t = tcase_create("core");
  tcase_set_timeout(t, 60);  // Check's default, 4 s, fails on a loaded host
  tcase_add_test(t, hostlists);
  tcase_add_test(t, nodes_csv);
  tcase_add_test(t, registry_ignores_dead);
  tcase_add_test(t, rate_matches_perf_model);
  tcase_add_test(t, checkpoint_round_trip);
  suite_add_tcase(s, t);
  return test_support::run_suite(s);
}
