// Readers: good input parses; each loader rejects a malformed row naming the
// right line (and column where it applies).
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <unistd.h>

#include "policy/io/cluster.h"
#include "policy/io/csv.h"
#include "policy/io/gavel.h"
#include "policy/io/minibatch.h"
#include "policy/io/pai.h"
#include "policy/io/philly.h"
#include "policy/io/trace.h"
#include "policy/model/cluster_model.h"
#include "policy/model/prices.h"

// Last: check.h defines a fail() macro that breaks <ios>.
#include <check.h>

using namespace duet;

static std::string src(const std::string& rel) {
  const char* t = std::getenv("top_srcdir");
  return std::string(t ? t : ".") + "/" + rel;
}

// Writes `text` to a temporary file and returns its path.
static std::string temp_file(const std::string& text) {
  char path[] = "/tmp/duet-check-io-XXXXXX";
  int fd = mkstemp(path);
  ck_assert_int_ge(fd, 0);
  close(fd);
  std::ofstream(path) << text;
  return path;
}

// Runs f, expects an InputError at `line` (and `column` when > 0) whose
// message contains `needle`.
template <class F>
static void expect_error(F f, int line, int column, const char* needle) {
  try {
    f();
  } catch (const InputError& e) {
    ck_assert_msg(e.line() == line, "expected line %d, got %d: %s", line, e.line(), e.what());
    if (column > 0) ck_assert_msg(e.column() == column, "expected column %d, got %d: %s", column, e.column(), e.what());
    ck_assert_msg(std::string(e.what()).find(needle) != std::string::npos, "'%s' not in '%s'", needle, e.what());
    return;
  }
  ck_abort_msg("no InputError (expected line %d: %s)", line, needle);
}

static Trace trace_of(const std::string& text) {
  std::istringstream in(text);
  return read_trace(in, "t.csv");
}
static ClusterSpec cluster_of(const std::string& text) {
  std::istringstream in(text);
  return read_cluster(in, "c.csv");
}

START_TEST(trace_reads_all_columns) {
  Trace t = trace_of("job_id,submit,duration,num_gpus,gpu_type,job_type,user,vc\n"
                     "7,0,10.5,2,V100|P100,LM (batch size 20),alice,vc1\n"
                     "\n"
                     "8,3,1,1,,,\"bob, jr\",vc2\n");
  ck_assert_int_eq(t.jobs.size(), 2);
  ck_assert_int_eq(t.jobs[0].id, 7);
  ck_assert_double_eq(t.jobs[0].duration, 10.5);
  ck_assert_str_eq(t.jobs[0].gpu_type.c_str(), "V100|P100");
  ck_assert_str_eq(t.jobs[0].job_type.c_str(), "LM (batch size 20)");
  ck_assert_str_eq(t.jobs[1].user.c_str(), "bob, jr");
  ck_assert_int_eq(t.jobs[1].line, 4);
  // Columns in another order, only the required ones.
  Trace u = trace_of("num_gpus,job_id,duration,submit\n4,1,5,0\n");
  ck_assert_int_eq(u.jobs[0].gpus, 4);
}
END_TEST

START_TEST(trace_rejects_malformed_rows) {
  const std::string h = "job_id,submit,duration,num_gpus\n";
  expect_error([&] { trace_of(h + "1,0,10,1\n2,0,abc,1\n"); }, 3, 5, "'duration': expected a number");
  expect_error([&] { trace_of(h + "1,0,10,1\n2,-1,10,1\n"); }, 3, 3, "'submit': expected a number >= 0");
  expect_error([&] { trace_of(h + "1,0,10,1\n2,0,10,0\n"); }, 3, 8, "'num_gpus': expected an integer >= 1");
  expect_error([&] { trace_of(h + "1,0,10,1\n2,0,10,1.5\n"); }, 3, 8, "expected an integer");
  expect_error([&] { trace_of(h + "1,0,10,1\n1,0,10,1\n"); }, 3, 1, "duplicate job_id 1 (first on line 2)");
  expect_error([&] { trace_of(h + "1,0,10,1\n2,0,10\n"); }, 3, 0, "expected 4 fields, got 3");
  expect_error([&] { trace_of(h + "1,0,10,1\n2,0,10,1,9\n"); }, 3, 10, "expected 4 fields, got 5");
  expect_error([&] { trace_of(h + "1,0,\"10,1\n"); }, 2, 5, "unterminated quoted field");
  expect_error([&] { trace_of("job_id,submit,duration\n"); }, 1, 0, "lacks required column 'num_gpus'");
  expect_error([&] { trace_of("job_id,submit,duration,num_gpus,colour\n"); }, 1, 33, "unknown column 'colour'");
  expect_error([&] { trace_of(""); }, 1, 0, "empty file");
  expect_error([&] { trace_of("job_id,submit,duration,num_gpus,gpu_type\n1,0,1,1,V100||P100\n"); }, 2, 9, "'gpu_type'");
  expect_error([] { read_trace("/nonexistent/trace.csv"); }, 0, 0, "cannot open");
}
END_TEST

START_TEST(cluster_reads_and_rejects) {
  ClusterSpec c = cluster_of("machine,gpu_type,num_gpus,rack,speed\na,V100,8,r1,\nb,T4,2,r1,0.5\n");
  ck_assert_int_eq(c.machines.size(), 2);
  ck_assert_double_eq(c.machines[1].speed, 0.5);
  ck_assert(c.machines[0].speed < 0);
  ck_assert_int_eq(c.total_gpus(), 10);
  const std::string h = "machine,gpu_type,num_gpus,speed\n";
  expect_error([&] { cluster_of(h + "a,V100,8,\na,V100,8,\n"); }, 3, 1, "duplicate machine 'a' (first on line 2)");
  expect_error([&] { cluster_of(h + "a,V100,8,\nb,V100,x,\n"); }, 3, 8, "'num_gpus'");
  expect_error([&] { cluster_of(h + "a,V100,8,\nb,T4,2,-1\n"); }, 3, 8, "'speed': expected a number > 0");
  expect_error([&] { cluster_of(h + "a,V100,8,\nb,,2,\n"); }, 3, 3, "'gpu_type'");
  expect_error([&] { cluster_of(h); }, 1, 0, "no machines");
  // A type the throughput table lacks needs a speed (error names the line).
  ThroughputTable t = read_gavel(src("data/gavel/simulation_throughputs.json"));
  expect_error([&] { build_cluster(cluster_of(h + "a,V100,8,\nb,A100,8,\n"), t); }, 3, 0, "'A100' is not in the throughput table");
  expect_error([&] { build_cluster(cluster_of(h + "a,T4,2,0.5\nb,T4,2,0.6\n"), t); }, 3, 0, "speed differs");
}
END_TEST

START_TEST(philly_reads_real_file_and_rejects) {
  Trace t = read_philly(src("data/philly/philly.csv"));
  ck_assert_int_eq(t.jobs.size(), 82247);
  ck_assert_double_eq(t.jobs.front().submit, 0);
  for (size_t i = 1; i < t.jobs.size(); ++i) ck_assert(t.jobs[i - 1].submit <= t.jobs[i].submit);
  int64_t ts = 0;
  ck_assert(parse_timestamp("1970-01-02 00:00:01", ts) && ts == 86401);
  ck_assert(parse_timestamp("2017-10-09 07:01:55", ts) && ts == 1507532515);
  ck_assert(!parse_timestamp("2017-13-09 07:01:55", ts));
  const std::string h = "timestamp,duration,num_gpus,gpu_time,cluster\n";
  std::string p = temp_file(h + "2017-10-09 07:01:55,66.0,1,66.0,11cb48\n2017-10-09 7:01:55,66.0,1,66.0,11cb48\n");
  expect_error([&] { read_philly(p); }, 3, 1, "expected 'YYYY-MM-DD HH:MM:SS'");
  std::remove(p.c_str());
  p = temp_file(h + "2017-10-09 07:01:55,66.0,1,66.0,11cb48\n2017-10-09 07:01:55,66.0,two,66.0,11cb48\n");
  expect_error([&] { read_philly(p); }, 3, 26, "'num_gpus'");
  std::remove(p.c_str());
}
END_TEST

START_TEST(pai_reads_real_file_and_rejects) {
  PaiResult r = read_pai(src("data/pai/pai_machine_spec.csv"));
  ck_assert_int_eq(r.cluster.machines.size(), 1814);
  ck_assert_int_eq(r.cluster.total_gpus(), 6742);
  ck_assert_int_eq(r.cpu_only_machines, 83);
  for (const auto& m : r.cluster.machines) ck_assert(!m.rack.empty());
  std::string p = temp_file("a,V100,96,512,8\nb,V100,96,512,eight\n");
  expect_error([&] { read_pai(p); }, 2, 15, "'cap_gpu'");
  std::remove(p.c_str());
  p = temp_file("a,V100,96,512,8\nb,V100,96,512\n");
  expect_error([&] { read_pai(p); }, 2, 0, "expected 5 fields, got 4");
  std::remove(p.c_str());
}
END_TEST

START_TEST(gavel_reads_real_file_and_rejects) {
  ThroughputTable t = read_gavel(src("data/gavel/simulation_throughputs.json"));
  ck_assert_int_eq(t.job_types(), 26);
  ck_assert_int_eq(t.gpu_types().size(), 3);
  ck_assert_int_ge(t.find_gpu("V100"), 0);
  ck_assert_int_eq(t.find_gpu("A100"), -1);
  std::string name;
  int scale = 0;
  ck_assert(parse_gavel_key("('LM (batch size 20)', 8)", name, scale) && name == "LM (batch size 20)" && scale == 8);
  ck_assert(!parse_gavel_key("LM", name, scale));
  std::string p = temp_file("{\n  \"v100\": {\n    \"('A', 1)\": {\"null\": 1.0,}\n  }\n}\n");
  expect_error([&] { read_gavel(p); }, 3, 0, "invalid JSON");
  std::remove(p.c_str());
  p = temp_file("{\"k80\": {}}\n");
  expect_error([&] { read_gavel(p); }, 0, 0, "reference GPU type key \"v100\"");
  std::remove(p.c_str());
}
END_TEST

START_TEST(minibatch_reads_real_file_and_rejects) {
  MinibatchJob j = read_minibatch(src("data/alibaba-minibatch/job_1_norm.csv"));
  ck_assert_int_eq(j.samples.size(), 3000);
  std::string p = temp_file(",worker,gpu,time,batch_time_norm\n0,0,25,1,476\n1,1,25,1,0\n");
  expect_error([&] { read_minibatch(p); }, 3, 10, "expected a number > 0");
  std::remove(p.c_str());
}
END_TEST

START_TEST(prices_read_and_reject) {
  PriceTable t = PriceTable::read(src("etc/gpu-prices.csv"));
  ck_assert_double_eq(t.lookup("v100").usd_per_gpu_hour, 3.06);
  ck_assert_double_eq(t.lookup("A100").watts, t.lookup("default").watts);
  std::string p = temp_file("gpu_type,usd_per_gpu_hour,watts\nV100,3,300\nT4,cheap,70\n");
  expect_error([&] { PriceTable::read(p); }, 3, 4, "'usd_per_gpu_hour'");
  std::remove(p.c_str());
}
END_TEST

START_TEST(writers_round_trip) {
  Trace t = trace_of("job_id,submit,duration,num_gpus,gpu_type,job_type,user,vc\n1,0.5,10,2,V100,LM (batch size 20),\"a,b\",v\n");
  std::ostringstream o;
  write_trace(o, t);
  Trace u = trace_of(o.str());
  ck_assert_str_eq(u.jobs[0].user.c_str(), "a,b");
  ck_assert_double_eq(u.jobs[0].submit, 0.5);
  ClusterSpec c = cluster_of("machine,gpu_type,num_gpus,rack,speed\na,T4,2,r,0.52\nb,V100,8,,\n");
  std::ostringstream oc;
  write_cluster(oc, c);
  ClusterSpec d = cluster_of(oc.str());
  ck_assert_double_eq(d.machines[0].speed, 0.52);
  ck_assert(d.machines[1].speed < 0);
}
END_TEST

int main() {
  Suite* s = suite_create("policy_io");
  TCase* tc = tcase_create("readers");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, trace_reads_all_columns);
  tcase_add_test(tc, trace_rejects_malformed_rows);
  tcase_add_test(tc, cluster_reads_and_rejects);
  tcase_add_test(tc, philly_reads_real_file_and_rejects);
  tcase_add_test(tc, pai_reads_real_file_and_rejects);
  tcase_add_test(tc, gavel_reads_real_file_and_rejects);
  tcase_add_test(tc, minibatch_reads_real_file_and_rejects);
  tcase_add_test(tc, prices_read_and_reject);
  tcase_add_test(tc, writers_round_trip);
  suite_add_tcase(s, tc);
  SRunner* r = srunner_create(s);
  srunner_run_all(r, CK_NORMAL);
  int failed = srunner_ntests_failed(r);
  srunner_free(r);
  return failed ? 1 : 0;
}
