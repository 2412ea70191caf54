// Readers: good input parses; each loader rejects a malformed row naming the
// right line (and column where it applies).
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <unistd.h>

#include "policy/io/cluster.h"
#include "policy/io/csv.h"
#include "policy/model/gavel.h"
#include "policy/io/minibatch.h"
#include "policy/io/pai.h"
#include "policy/io/philly.h"
#include "policy/io/trace.h"
#include "policy/model/cluster_model.h"
#include "policy/model/prices.h"
#include "tests/unit/in_child.h"
#include "tests/unit/test_data.h"

// Last: check.h defines a fail() macro that breaks <ios>.
#include <check.h>
#include "tests/unit/run_suite.h"

using namespace duet;
using test_support::source_path;

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
  Trace t = trace_of(
      "job_id,submit,duration,num_gpus,gpu_type,job_type,user,vc\n"
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
  expect_error([&] { trace_of(h + "1,0,10,1\n2,-1,10,1\n"); }, 3, 3, "'submit': expected a number from 0 to 315360000");
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
  expect_error([&] { cluster_of(h + "a,V100,8,\nb,T4,2,-1\n"); }, 3, 8,
               "'speed': expected a number from 0.001 to 1000");
  expect_error([&] { cluster_of(h + "a,V100,8,\nb,,2,\n"); }, 3, 3, "'gpu_type'");
  expect_error([&] { cluster_of(h); }, 1, 0, "no machines");
  // A type the throughput table lacks needs a speed (error names the line).
  ThroughputTable t = read_gavel(source_path("data/gavel/simulation_throughputs.json"));
  expect_error([&] { build_cluster(cluster_of(h + "a,V100,8,\nb,A100,8,\n"), t); }, 3, 0,
               "'A100' is not in the throughput table");
  expect_error([&] { build_cluster(cluster_of(h + "a,T4,2,0.5\nb,T4,2,0.6\n"), t); }, 3, 0, "speed differs");
}
END_TEST

START_TEST(philly_reads_real_file_and_rejects) {
  Trace t = read_philly(source_path("data/philly/philly.csv"));
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
  PaiResult r = read_pai(source_path("data/pai/pai_machine_spec.csv"));
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
  ThroughputTable t = read_gavel(source_path("data/gavel/simulation_throughputs.json"));
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
  // A number no double holds is bad JSON too (nlohmann throws out_of_range for it, not parse_error).
  p = temp_file("{\"v100\": {\"('A', 1)\": {\"null\": 29.9e471573}}}\n");
  expect_error([&] { read_gavel(p); }, 0, 0, "number overflow");
  std::remove(p.c_str());
  // Throughputs whose ratios would overflow, or negative ones, are refused by key path.
  for (const char* bad : {"1e-300", "-1", "2e9"}) {
    p = temp_file(std::string("{\"v100\": {\"('A', 1)\": {\"null\": 1}}, \"k80\": {\"('A', 1)\": {\"null\": ") + bad +
                  "}}}\n");
    expect_error([&] { read_gavel(p); }, 0, 0, "at \"k80\"/\"('A', 1)\"/\"null\": expected a throughput of 0");
    std::remove(p.c_str());
  }
  p = temp_file("{\"v100\": {\"('A', 1)\": {\"null\": 1, \"('A', 1)\": [-5, 1]}}}\n");
  expect_error([&] { read_gavel(p); }, 0, 0, "at \"v100\"/\"('A', 1)\"/\"('A', 1)\": expected a throughput");
  std::remove(p.c_str());
  // More job types than the co-location table may hold: refused before it is allocated.
  std::string many = "{\"v100\": {";
  for (std::size_t i = 0; i <= kMaxGavelJobTypes; ++i)
    many += (i ? ", " : "") + std::string("\"('J") + std::to_string(i) + "', 1)\": {\"null\": 1}";
  p = temp_file(many + "}}\n");
  expect_error([&] { read_gavel(p); }, 0, 0, "at most 256 job types, got 257");
  std::remove(p.c_str());
  // Job types are numbered as the GPU types, in key order, first name them.
  p = temp_file(
      "{\"k80\": {\"('B', 1)\": {\"null\": 1}}, \"v100\": {\"('A', 1)\": {\"null\": 2}, \"('B', 1)\": {\"null\": "
      "4}}}\n");
  t = read_gavel(p);
  ck_assert_int_eq(t.job_types(), 2);
  ck_assert(t.job_type_name(0) == "B" && t.job_type_name(1) == "A");
  ck_assert_double_eq_tol(t.speed_ratio(0, t.find_gpu("k80")), 0.25, 1e-12);
  std::remove(p.c_str());
}
END_TEST

START_TEST(minibatch_reads_real_file_and_rejects) {
  MinibatchJob j = read_minibatch(source_path("data/alibaba-minibatch/job_1_norm.csv"));
  ck_assert_int_eq(j.samples.size(), 3000);
  std::string p = temp_file(",worker,gpu,time,batch_time_norm\n0,0,25,1,476\n1,1,25,1,0\n");
  expect_error([&] { read_minibatch(p); }, 3, 10, "expected a number > 0");
  std::remove(p.c_str());
}
END_TEST

START_TEST(prices_read_and_reject) {
  PriceTable t = PriceTable::read(source_path("etc/gpu-prices.csv"));
  ck_assert_double_eq(t.lookup("v100").usd_per_gpu_hour, 3.06);
  ck_assert_double_eq(t.lookup("A100").watts, t.lookup("default").watts);
  std::string p = temp_file("gpu_type,usd_per_gpu_hour,watts\nV100,3,300\nT4,cheap,70\n");
  expect_error([&] { PriceTable::read(p); }, 3, 4, "'usd_per_gpu_hour'");
  std::remove(p.c_str());
}
END_TEST

// Runs f in a child with a 10 s deadline; returns the InputError text,
// "OK", "HUNG" or "OTHER: ...". For inputs that used to block for ever.
template <class F>
static std::string error_in_child(F f) {
  return test_support::in_child([&]() -> std::string {
    try {
      f();
    } catch (const InputError& e) { return e.what(); } catch (const std::exception& e) {
      return std::string("OTHER: ") + e.what();
    }
    return "OK";
  });
}

// Times past 10 years are refused with file and line: a 1e300 s job was
// accepted (finite, >= 0) and then hung the simulator.
START_TEST(trace_times_limited) {
  const std::string h = "job_id,submit,duration,num_gpus\n";
  expect_error([&] { trace_of(h + "1,0,10,1\n2,0,1e300,1\n"); }, 3, 5,
               "t.csv:3:5: field 'duration': expected a number from 0 to 315360000 seconds (10 years), got '1e300'");
  expect_error([&] { trace_of(h + "1,1e300,10,1\n"); }, 2, 3, "field 'submit': expected a number from 0 to 315360000");
  expect_error([&] { trace_of(h + "1,315360000.5,10,1\n"); }, 2, 3, "'submit'");
  Trace t = trace_of(h + "1,315360000,315360000,1\n");
  ck_assert_double_eq(t.jobs[0].duration, 315360000);
  std::istringstream ph("timestamp,duration,num_gpus,gpu_time,cluster\n2017-10-09 07:01:55,1e300,1,66.0,vc\n");
  expect_error([&] { read_philly(ph, "p.csv"); }, 2, 21, "'duration': expected a number from 0 to 315360000");
  std::istringstream span(
      "timestamp,duration,num_gpus,gpu_time,cluster\n2000-01-01 00:00:00,1,1,1,vc\n"
      "2017-10-09 07:01:55,1,1,1,vc\n");
  expect_error([&] { read_philly(span, "p.csv"); }, 3, 1, "more than 315360000 s (10 years)");
}
END_TEST

// Speeds outside 1e-3..1e3 (1e308, a denormal) and more than 64 GPU types
// are refused by the reader, naming the line.
START_TEST(cluster_values_limited) {
  const std::string h = "machine,gpu_type,num_gpus,speed\n";
  expect_error([&] { cluster_of(h + "a,T4,2,1e308\n"); }, 2, 8, "'speed': expected a number from 0.001 to 1000");
  expect_error([&] { cluster_of(h + "a,T4,2,4.9e-324\n"); }, 2, 8, "'speed': expected a number from 0.001 to 1000");
  ClusterSpec ok = cluster_of(h + "a,T4,2,0.001\nb,X,2,1000\n");
  ck_assert_double_eq(ok.machines[1].speed, 1000);
  expect_error([&] { cluster_of(h + "a,T4,1025,\n"); }, 2, 6, "at most 1024 GPUs per machine");
  std::string many = h;
  for (int i = 0; i < 65; ++i) many += "m" + std::to_string(i) + ",T" + std::to_string(i) + ",1,1\n";
  expect_error([&] { cluster_of(many); }, 66, 0, "GPU type 'T64' is one more than the 64 GPU types");
}
END_TEST

// Lines and fields are limited while reading: a 1 GiB line is refused after
// 1 MiB (std::getline held it whole: 3.2 GiB of RSS). Sparse file: no disk.
START_TEST(csv_line_and_field_limits) {
  char path[] = "/tmp/duet-check-io-big-XXXXXX";
  int fd = mkstemp(path);
  ck_assert_int_ge(fd, 0);
  const std::string h = "job_id,submit,duration,num_gpus\n";
  ck_assert_int_eq(write(fd, h.data(), h.size()), static_cast<ssize_t>(h.size()));
  ck_assert_int_eq(ftruncate(fd, off_t{1} << 30), 0);
  close(fd);
  expect_error([&] { read_trace(path); }, 2, 0, ":2: line longer than 1048576 bytes");
  std::remove(path);
  expect_error([&] { trace_of(h + "1,0,10,1\n" + std::string(2 << 20, '9') + "\n"); }, 3, 0,
               "line longer than 1048576 bytes");
  expect_error([&] { trace_of("job_id,submit,duration,num_gpus,user\n1,0,10,1," + std::string(70000, 'u') + "\n"); }, 2,
               10, "field longer than 65536 bytes");
}
END_TEST

// A FIFO or a device as input is refused at once (it used to block in open).
START_TEST(special_files_refused) {
  char dir[] = "/tmp/duet-check-io-fifo-XXXXXX";
  ck_assert(mkdtemp(dir) != nullptr);
  const std::string fifo = std::string(dir) + "/trace.csv";
  ck_assert_int_eq(mkfifo(fifo.c_str(), 0600), 0);
  std::string msg = error_in_child([&] { read_trace(fifo); });
  ck_assert_msg(msg == fifo + ": is a FIFO, expected a regular file (CSV file)", "%s", msg.c_str());
  msg = error_in_child([&] { read_cluster("/dev/zero"); });
  ck_assert_msg(msg == "/dev/zero: is a character device, expected a regular file (CSV file)", "%s", msg.c_str());
  msg = error_in_child([&] { read_gavel(fifo); });
  ck_assert_msg(msg.find("is a FIFO") != std::string::npos, "%s", msg.c_str());
  std::remove(fifo.c_str());
  rmdir(dir);
}
END_TEST

// Input quoted in a message is escaped: no terminal control reaches a log.
START_TEST(errors_escape_control_characters) {
  try {
    trace_of("job_id,submit,duration,num_gpus\n1,0,\x1b]0;owned\x07\x1b[2J,1\n");
    ck_abort_msg("bad duration accepted");
  } catch (const InputError& e) {
    const std::string msg = e.what();
    ck_assert_msg(msg.find('\x1b') == std::string::npos && msg.find('\x07') == std::string::npos, "%s", msg.c_str());
    ck_assert_msg(msg.find("got '\\x1b]0;owned\\x07\\x1b[2J'") != std::string::npos, "%s", msg.c_str());
  }
}
END_TEST

// PAI: the stream entry point, and more than 64 GPU types refused (duet
// convert pai wrote clusters the simulator then refused).
START_TEST(pai_stream_and_type_limit) {
  std::istringstream ok("a,V100,96,512,8\nb,T4,96,512,0\n");
  PaiResult r = read_pai(ok, "pai.csv");
  ck_assert_int_eq(r.cluster.machines.size(), 1);
  ck_assert_int_eq(r.cpu_only_machines, 1);
  std::string many;
  for (int i = 0; i < 65; ++i) many += "m" + std::to_string(i) + ",T" + std::to_string(i) + ",96,512,1\n";
  std::istringstream in(many);
  expect_error([&] { read_pai(in, "pai.csv"); }, 65, 5, "GPU type 'T64' is one more than the 64 GPU types");
}
END_TEST

START_TEST(writers_round_trip) {
  Trace t = trace_of(
      "job_id,submit,duration,num_gpus,gpu_type,job_type,user,vc\n1,0.5,10,2,V100,LM (batch size 20),\"a,b\",v\n");
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
  tcase_add_test(tc, trace_times_limited);
  tcase_add_test(tc, cluster_values_limited);
  tcase_add_test(tc, csv_line_and_field_limits);
  tcase_add_test(tc, special_files_refused);
  tcase_add_test(tc, errors_escape_control_characters);
  tcase_add_test(tc, pai_stream_and_type_limit);
  suite_add_tcase(s, tc);
  return test_support::run_suite(s);
}
