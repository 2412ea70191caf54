// The duet command end to end: help, convert, sim --json determinism, errors
// naming file and line, eval outputs.
#include <pwd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

// Last: check.h defines a fail() macro that breaks <ios>.
#include <check.h>

namespace fs = std::filesystem;

static std::string env(const char* name, const char* fallback) {
  const char* v = std::getenv(name);
  return v ? v : fallback;
}
static std::string srcdir() { return env("top_srcdir", "."); }
static std::string duet() { return env("top_builddir", ".") + "/duet"; }

static std::string tmpdir() {
  static std::string d = [] {
    char t[] = "/tmp/duet-check-cli-XXXXXX";
    ck_assert(mkdtemp(t) != nullptr);
    return std::string(t);
  }();
  return d;
}

static std::string slurp(const std::string& p) {
  std::ifstream f(p);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

struct Out {
  int rc;
  std::string out, err;
};

// Runs duet with args (a shell fragment), data found through the environment.
static Out run(const std::string& args) {
  std::string o = tmpdir() + "/stdout", e = tmpdir() + "/stderr";
  std::string cmd = "DUET_DATA_DIR='" + srcdir() + "' DUET_ETC_DIR='" + srcdir() + "/etc' '" + duet() + "' " + args +
                    " >'" + o + "' 2>'" + e + "'";
  int rc = std::system(cmd.c_str());
  return Out{WIFEXITED(rc) ? WEXITSTATUS(rc) : -1, slurp(o), slurp(e)};
}

static void write(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

// run() under `timeout`: for inputs that used to hang (rc 124 then).
static Out run_limited(int seconds, const std::string& args) {
  std::string o = tmpdir() + "/stdout", e = tmpdir() + "/stderr";
  std::string cmd = "DUET_DATA_DIR='" + srcdir() + "' DUET_ETC_DIR='" + srcdir() + "/etc' timeout " +
                    std::to_string(seconds) + " '" + duet() + "' " + args + " >'" + o + "' 2>'" + e + "'";
  int rc = std::system(cmd.c_str());
  return Out{WIFEXITED(rc) ? WEXITSTATUS(rc) : -1, slurp(o), slurp(e)};
}

START_TEST(help_everywhere) {
  for (const char* sub : {"", "sim ", "eval ", "convert ", "convert philly ", "convert pai ", "bench ",
                          "scenario generate ", "scenario list "}) {
    Out r = run(std::string(sub) + "--help");
    ck_assert_msg(r.rc == 0, "duet %s--help exited %d", sub, r.rc);
    ck_assert(r.out.find("Usage") != std::string::npos);
  }
}
END_TEST

// Command-line errors exit 2 and name what was expected (duet(1), EXIT STATUS).
START_TEST(usage_errors_exit_2) {
  for (const char* args : {"", "foo", "--bogus", "sim --bogus", "sim --order fifo"}) {
    Out r = run(args);
    ck_assert_msg(r.rc == 2, "duet %s exited %d: %s", args, r.rc, r.err.c_str());
    ck_assert_msg(!r.err.empty(), "duet %s said nothing on stderr", args);
  }
  Out r = run("foo");
  ck_assert_msg(r.err.find("unknown subcommand 'foo'") != std::string::npos, "%s", r.err.c_str());
  for (const char* sub :
       {"sim", "eval", "convert", "bench", "model", "train", "replay", "report", "explain", "scenario", "check-config"})
    ck_assert_msg(r.err.find(sub) != std::string::npos, "the error does not name %s: %s", sub, r.err.c_str());
  Out v = run("--version");
  ck_assert_msg(v.rc == 0 && v.out.rfind("duet ", 0) == 0, "duet --version: %d %s", v.rc, v.out.c_str());
}
END_TEST

START_TEST(convert_then_sim_json_is_deterministic) {
  const std::string d = tmpdir();
  write(d + "/philly.csv",
        "timestamp,duration,num_gpus,gpu_time,cluster\n"
        "2017-10-01 00:00:10,100.0,1,100.0,vcA\n"
        "2017-10-01 00:00:00,50.0,2,100.0,vcB\n"
        "2017-10-01 00:01:00,3000.0,4,12000.0,vcA\n"
        "2017-10-01 00:01:30,20.0,1,20.0,vcB\n");
  Out c = run("convert philly '" + d + "/philly.csv' -o '" + d + "/trace.csv'");
  ck_assert_msg(c.rc == 0, "%s", c.err.c_str());
  std::string trace = slurp(d + "/trace.csv");
  const std::string header = trace.substr(0, trace.find('\n'));
  ck_assert_str_eq(header.c_str(), "job_id,submit,duration,num_gpus,gpu_type,job_type,user,vc");
  ck_assert(trace.find("\n2,0,50,2,,,,vcB\n1,10,100,1,,,,vcA\n") != std::string::npos);
  write(d + "/pai.csv", "a,V100,96,512,8\nb,CPU,96,512,0\nc,T4,64,256,2\n");
  Out p = run("convert pai '" + d + "/pai.csv' -o '" + d + "/cluster.csv'");
  ck_assert_msg(p.rc == 0, "%s", p.err.c_str());
  ck_assert(p.err.find("1 CPU-only") != std::string::npos);
  const std::string cluster = slurp(d + "/cluster.csv");
  ck_assert_str_eq(cluster.c_str(), "machine,gpu_type,num_gpus,rack,speed\na,V100,8,V100-r000,\nc,T4,2,T4-r000,0.52\n");
  const std::string sim = "sim --trace '" + d + "/trace.csv' --cluster '" + d +
                          "/cluster.csv' --order qssf --place best-fit --json --seed 9";
  Out a = run(sim), b = run(sim);
  ck_assert_msg(a.rc == 0, "%s", a.err.c_str());
  auto ja = nlohmann::json::parse(a.out), jb = nlohmann::json::parse(b.out);
  for (const char* k : {"jobs", "avg_jct_s", "p50_jct_s", "p95_jct_s", "p99_jct_s", "avg_queue_s", "makespan_s",
                        "fees_usd", "energy_kwh", "gpu_util", "events", "wall_s"})
    ck_assert_msg(ja.contains(k), "sim --json lacks %s", k);
  ck_assert_int_eq(ja["jobs"].get<int>(), 4);
  ck_assert(ja["fees_usd"].get<double>() > 0 && ja["energy_kwh"].get<double>() > 0);
  for (auto* j : {&ja, &jb}) j->erase("wall_s"), j->erase("events_per_s");
  const std::string sa = ja.dump(), sb = jb.dump();
  ck_assert_str_eq(sa.c_str(), sb.c_str());
  // Ideal mode: JCTs are durations on an idle cluster.
  Out i = run("sim --trace '" + d + "/trace.csv' --cluster '" + d + "/cluster.csv' --ideal --json");
  auto ji = nlohmann::json::parse(i.out);
  ck_assert_double_eq(ji["avg_jct_s"].get<double>(), (100 + 50 + 3000 + 20) / 4.0);
}
END_TEST

START_TEST(errors_name_file_and_line) {
  const std::string d = tmpdir();
  write(d + "/bad.csv", "job_id,submit,duration,num_gpus\n1,0,10,1\n2,0,ten,1\n");
  write(d + "/c.csv", "machine,gpu_type,num_gpus\nm,V100,8\n");
  Out r = run("sim --trace '" + d + "/bad.csv' --cluster '" + d + "/c.csv'");
  ck_assert_int_eq(r.rc, 1);
  ck_assert_msg(r.err.find("bad.csv:3:5: field 'duration': expected a number, got 'ten'") != std::string::npos, "%s",
                r.err.c_str());
  Out u = run("sim --trace '" + d + "/c.csv' --cluster '" + d + "/c.csv'");
  ck_assert_int_eq(u.rc, 1);
  ck_assert(u.err.find("c.csv:1:1: unknown column 'machine'") != std::string::npos);
  Out p = run("sim --trace '" + d + "/bad.csv' --cluster '" + d + "/c.csv' --order nope");
  ck_assert_int_eq(p.rc, 1);
  ck_assert(p.err.find("unknown ordering policy 'nope'") != std::string::npos);
}
END_TEST

START_TEST(eval_writes_table_json_and_plots) {
  const std::string d = tmpdir();
  write(d + "/t.csv", "job_id,submit,duration,num_gpus\n1,0,100,4\n2,0,50,8\n3,10,20,2\n4,12,5,1\n");
  write(d + "/c.csv", "machine,gpu_type,num_gpus\nm0,V100,4\nm1,P100,4\n");
  Out r = run("eval --trace '" + d + "/t.csv' --cluster '" + d +
              "/c.csv' --policies 'fifo/*,sjf-oracle/best-fit' --out '" + d + "/ev'");
  ck_assert_msg(r.rc == 0, "%s", r.err.c_str());
  std::string md = slurp(d + "/ev/summary.md");
  ck_assert(md.find("| fifo | first-fit |") != std::string::npos);
  ck_assert(md.find("| sjf-oracle *oracle* | best-fit |") != std::string::npos);
  ck_assert(md.find("**best**") != std::string::npos);
  auto j = nlohmann::json::parse(slurp(d + "/ev/summary.json"));
  ck_assert_int_eq(j["results"].size(), 7);  // fifo with each of the 6 placements, and sjf-oracle/best-fit
  ck_assert(j["best"].get<std::string>().rfind("fifo/", 0) == 0);
  if (access("/usr/bin/gnuplot", X_OK) == 0 || r.out.find(".png") != std::string::npos)
    for (const char* png : {"jct_cdf.png", "queue.png", "gpu_util.png"}) {
      ck_assert_msg(fs::exists(d + "/ev/" + png), "%s missing", png);
      ck_assert_int_gt(fs::file_size(d + "/ev/" + png), 1000);
    }
}
END_TEST

START_TEST(convert_philly_window) {
  const std::string d = tmpdir();
  Out r = run("convert philly '" + srcdir() + "/data/philly/philly.csv' --from 2017-11-16 -o '" + d + "/test.csv'");
  ck_assert_msg(r.rc == 0, "%s", r.err.c_str());
  ck_assert_msg(r.err.find("17219 jobs") != std::string::npos, "%s", r.err.c_str());
  std::ifstream f(d + "/test.csv");
  std::string header, first;
  std::getline(f, header);
  std::getline(f, first);
  // submit counts from --from: the first job of Nov 16 comes within the day
  const double submit = std::stod(first.substr(first.find(',') + 1));
  ck_assert(submit >= 0 && submit < 86400);
  r = run("convert philly '" + srcdir() + "/data/philly/philly.csv' --from 2017-11-01 --to 2017-11-16 -o -");
  ck_assert(r.err.find("12179 jobs") != std::string::npos);
  r = run("convert philly '" + srcdir() + "/data/philly/philly.csv' --from 2017-11-31x -o -");
  ck_assert_int_eq(r.rc, 1);
  ck_assert(r.err.find("--from: expected 'YYYY-MM-DD'") != std::string::npos);
  r = run("convert philly '" + srcdir() + "/data/philly/philly.csv' --from 2018-02-01 -o -");
  ck_assert_int_eq(r.rc, 1);
  ck_assert(r.err.find("no jobs in the Philly trace in the time window") != std::string::npos);
}
END_TEST

START_TEST(protocol_runs_loads_and_seeds) {
  const std::string d = tmpdir();
  Out r =
      run("eval --protocol philly --split validate --loads 90,130 --seeds 1,2 --policies fifo/first-fit,qssf/first-fit "
          "--no-plots --out '" +
          d + "/proto'");
  ck_assert_msg(r.rc == 0, "%s", r.err.c_str());
  auto j = nlohmann::json::parse(slurp(d + "/proto/summary.json"));
  ck_assert_str_eq(j["split"].get<std::string>().c_str(), "validate");
  ck_assert_int_eq(j["jobs"].get<int>(), 12179);
  ck_assert_int_eq(j["loads"].size(), 2);
  for (const auto& l : j["loads"]) {
    ck_assert_int_eq(l["pairs"].size(), 2);
    ck_assert_int_eq(l["clusters"].size(), 2);
    for (const auto& p : l["pairs"]) ck_assert_int_eq(p["mean_jct_h"].size(), 2);
    // with queues, QSSF beats FIFO: the protocol really loads the cluster
    ck_assert_str_eq(l["best_baseline"].get<std::string>().c_str(), "qssf/first-fit");
  }
  // a higher load means a smaller cluster for the same seed
  auto gpus = [&](int load, int seed) {
    std::ifstream f(d + "/proto/load" + std::to_string(load) + "/seed" + std::to_string(seed) + "/cluster.csv");
    std::string line;
    int n = -1;
    while (std::getline(f, line)) ++n;
    return n;
  };
  ck_assert_int_gt(gpus(90, 1), gpus(130, 1));
  ck_assert(fs::exists(d + "/proto/load90/seed2/summary.md"));
  ck_assert(slurp(d + "/proto/summary.md").find("## Load 130%") != std::string::npos);
  r = run("eval --protocol philly --trace x.csv --out '" + d + "/p2'");
  ck_assert_int_eq(r.rc, 1);
  ck_assert(r.err.find("leave out --trace and --cluster") != std::string::npos);
  r = run("eval --protocol philly --loads 90,zero --out '" + d + "/p2'");
  ck_assert(r.rc == 1 && r.err.find("--loads: expected") != std::string::npos);
  r = run("eval --out '" + d + "/p2'");
  ck_assert(r.rc == 1 && r.err.find("--trace and --cluster are required") != std::string::npos);
}
END_TEST

// --protocol generalize refuses what it cannot use before it trains anything
// (its runs are checked by check_policy_generalize).
START_TEST(generalize_protocol_refuses_bad_arguments) {
  const std::string d = tmpdir();
  Out r = run("eval --protocol generalize --model '" + srcdir() + "/models/duet.model' --out '" + d + "/g'");
  ck_assert(r.rc == 1 && r.err.find("leave out --model") != std::string::npos);
  r = run("eval --protocol generalize --sources small,nosuch --out '" + d + "/g'");
  ck_assert(r.rc == 1 && r.err.find("'nosuch' is neither a cluster family nor a workload") != std::string::npos);
  r = run("eval --protocol generalize --budget huge --out '" + d + "/g'");
  ck_assert(r.rc != 0 && r.err.find("--budget") != std::string::npos);
  r = run("eval --protocol nosuch --out '" + d + "/g'");
  ck_assert(r.rc == 1 && r.err.find("expected 'philly' or 'generalize'") != std::string::npos);
  ck_assert(!fs::exists(d + "/g/summary.md"));
}
END_TEST

// A job of 1e300 s was accepted and `duet sim` ran for ever (next_fluct +=
// 3600 stops changing past ~3e19): now the reader refuses it, naming the line.
START_TEST(sim_refuses_huge_times) {
  const std::string d = tmpdir();
  write(d + "/c.csv", "machine,gpu_type,num_gpus\nm,V100,8\n");
  write(d + "/huge.csv", "job_id,submit,duration,num_gpus\n1,0,10,1\n2,0,1e300,1\n");
  Out r = run_limited(60, "sim --trace '" + d + "/huge.csv' --cluster '" + d + "/c.csv'");
  ck_assert_msg(r.rc == 1, "rc %d: %s", r.rc, r.err.c_str());
  ck_assert_msg(
      r.err.find("huge.csv:3:5: field 'duration': expected a number from 0 to 315360000") != std::string::npos, "%s",
      r.err.c_str());
  write(d + "/late.csv", "job_id,submit,duration,num_gpus\n1,1e300,10,1\n");
  r = run_limited(60, "sim --trace '" + d + "/late.csv' --cluster '" + d + "/c.csv'");
  ck_assert_msg(r.rc == 1 && r.err.find("late.csv:2:3: field 'submit'") != std::string::npos, "rc %d: %s", r.rc,
                r.err.c_str());
}
END_TEST

// A preemptive model preempts the long job for the short one; --no-preemption
// (priority/duet with Preemption=off) ranks the pending job only, so it waits.
START_TEST(sim_no_preemption_keeps_running_jobs) {
  const std::string d = tmpdir();
  write(d + "/c1.csv", "machine,gpu_type,num_gpus\nm,V100,1\n");
  write(d + "/t2.csv", "job_id,submit,duration,num_gpus\n1,0,10000,1\n2,4000,100,1\n");
  ck_assert_int_eq(run("model init --preemptive -o '" + d + "/pre.model'").rc, 0);
  const std::string sim = "sim --trace '" + d + "/t2.csv' --cluster '" + d +
                          "/c1.csv' --order duet --place duet --model '" + d + "/pre.model' --ideal --json";
  Out on = run(sim), off = run(sim + " --no-preemption");
  ck_assert_msg(on.rc == 0 && on.out.find("\"preemptions\":1,") != std::string::npos, "%s%s", on.out.c_str(),
                on.err.c_str());
  ck_assert_msg(off.rc == 0 && off.out.find("\"preemptions\":0,") != std::string::npos &&
                    off.out.find("\"avg_jct_s\":8050.0") != std::string::npos,
                "%s%s", off.out.c_str(), off.err.c_str());
  Out g = run("eval --protocol generalize --no-preemption --out '" + d + "/g'");
  ck_assert_msg(g.rc == 1 && g.err.find("--no-preemption applies to a --model") != std::string::npos, "%s",
                g.err.c_str());
}
END_TEST

// --jobs-out: a row per job. A 3-GPU job arrives when the two 4-GPU machines
// have 2 and 1 GPUs free: best-fit spreads it at once over both; the learned
// placement waits for a machine to hold it whole (consolidation,
// placement_routine.h), which is the 2-GPU job's machine at t=1000, and so
// does best-fit-wait.
START_TEST(sim_jobs_out_and_consolidation) {
  const std::string d = tmpdir();
  write(d + "/c2.csv", "machine,gpu_type,num_gpus\nm1,V100,4\nm2,V100,4\n");
  write(d + "/t3.csv", "job_id,submit,duration,num_gpus,user\n1,0,1000,2,ann\n2,0,3000,3,bob\n3,10,100,3,\"c,d\"\n");
  ck_assert_int_eq(run("model init -o '" + d + "/m.model'").rc, 0);
  const std::string sim = "sim --trace '" + d + "/t3.csv' --cluster '" + d + "/c2.csv' --ideal --order fifo ";
  // the line of job `id` (its job type is drawn: not compared)
  auto row = [](const std::string& csv, const std::string& id) {
    const size_t at = csv.find("\n" + id + ",");
    return at == std::string::npos ? std::string() : csv.substr(at + 1, csv.find('\n', at + 1) - at - 1);
  };
  Out bf = run(sim + "--place best-fit --jobs-out '" + d + "/bf.csv'");
  ck_assert_msg(bf.rc == 0, "%s", bf.err.c_str());
  const std::string rows = slurp(d + "/bf.csv");
  ck_assert_msg(rows.rfind("job_id,gpus,submit_s,start_s,finish_s,jct_s,queue_s,run_s,preemptions,gpu_types,machines,"
                           "job_type,user,vc\n",
                           0) == 0,
                "%s", rows.c_str());
  ck_assert_msg(row(rows, "1").rfind("1,2,0.000,0.000,1000.000,1000.000,0.000,1000.000,0,V100,m1:2,", 0) == 0, "%s",
                rows.c_str());
  const std::string spread = row(rows, "3");
  ck_assert_msg(spread.rfind("3,3,10.000,10.000,110.000,100.000,0.000,100.000,0,V100,m1:2 m2:1,", 0) == 0 &&
                    spread.ends_with(",\"c,d\","),
                "%s", rows.c_str());
  // best-fit-wait waits as the learned placement does, for m1 (4 free at t=1000, m2 1)
  Out bw = run(sim + "--place best-fit-wait --jobs-out '" + d + "/bw.csv'");
  ck_assert_msg(bw.rc == 0, "%s", bw.err.c_str());
  const std::string waits = slurp(d + "/bw.csv");
  ck_assert_msg(row(waits, "3").rfind("3,3,10.000,1000.000,1100.000,1090.000,990.000,100.000,0,V100,m1:3,", 0) == 0,
                "%s", waits.c_str());
  Out du = run(sim + "--place duet --model '" + d + "/m.model' --jobs-out '" + d + "/duet.csv'");
  ck_assert_msg(du.rc == 0, "%s", du.err.c_str());
  const std::string learned = slurp(d + "/duet.csv"), waited = row(learned, "3");
  ck_assert_msg(waited.rfind("3,3,10.000,1000.000,1100.000,1090.000,990.000,100.000,0,V100,m1:3,", 0) == 0 ||
                    waited.rfind("3,3,10.000,1000.000,1100.000,1090.000,990.000,100.000,0,V100,m2:3,", 0) == 0,
                "%s", learned.c_str());
}
END_TEST

// duet model set: a copy that differs in the spread rule alone. A 6-GPU job
// that no machine holds: the fastest rule puts it on the V100 machine and a
// K80 one (it runs at K80 speed), the tight rule on the two K80 machines,
// leaving the V100 free; the copy places exactly as the original does with
// --place duet-tight-sets.
START_TEST(model_set_changes_the_spread_rule_only) {
  const std::string d = tmpdir();
  write(d + "/c.csv", "machine,gpu_type,num_gpus\nm1,V100,4\nm2,K80,4\nm3,K80,4\n");
  write(d + "/t.csv", "job_id,submit,duration,num_gpus,user\n1,0,1000,6,ann\n");
  ck_assert_int_eq(run("model init --seed 3 -o '" + d + "/a.model'").rc, 0);
  Out set = run("model set '" + d + "/a.model' --spread-sets tight -o '" + d + "/b.model'");
  ck_assert_msg(set.rc == 0 && set.out.find("spread sets tight, was fastest; format 3") != std::string::npos, "%s%s",
                set.out.c_str(), set.err.c_str());
  Out info = run("model info '" + d + "/b.model'");
  ck_assert_msg(
      info.out.find("spread sets  tight\n") != std::string::npos &&
          info.out.find("duet model init --seed 3; duet model set --spread-sets tight\n") != std::string::npos,
      "%s", info.out.c_str());
  // --ideal: the two K80 machines equally fast (no drawn per-machine spread)
  const std::string sim = "sim --trace '" + d + "/t.csv' --cluster '" + d + "/c.csv' --ideal --order fifo ";
  auto machines = [&](const std::string& place, const std::string& model, const std::string& out) {
    Out r = run(sim + "--place " + place + " --model '" + d + "/" + model + "' --jobs-out '" + d + "/" + out + "'");
    ck_assert_msg(r.rc == 0, "%s", r.err.c_str());
    return slurp(d + "/" + out);
  };
  const std::string fastest = machines("duet", "a.model", "fa.csv");
  const std::string tight = machines("duet", "b.model", "tb.csv");
  ck_assert_msg(fastest.find("m1:") != std::string::npos, "%s", fastest.c_str());
  ck_assert_msg(tight.find("m1:") == std::string::npos && tight.find("m2:") != std::string::npos &&
                    tight.find("m3:") != std::string::npos,
                "%s", tight.c_str());
  ck_assert(machines("duet-tight-sets", "a.model", "ta.csv") == tight);
  Out bad = run("model set '" + d + "/a.model' --spread-sets widest -o '" + d + "/c.model'");
  ck_assert(bad.rc == 2 && !fs::exists(d + "/c.model"));
}
END_TEST

// duet convert pai wrote clusters of more than 64 GPU types that sim then
// refused: convert refuses them itself, naming the line.
START_TEST(convert_pai_refuses_over_64_types) {
  const std::string d = tmpdir();
  std::string spec;
  for (int i = 0; i < 65; ++i) spec += "m" + std::to_string(i) + ",G" + std::to_string(i) + ",96,512,8\n";
  write(d + "/pai65.csv", spec);
  Out r = run("convert pai '" + d + "/pai65.csv' -o '" + d + "/c65.csv'");
  ck_assert_msg(r.rc == 1, "rc %d: %s", r.rc, r.err.c_str());
  ck_assert_msg(r.err.find("pai65.csv:65:5: GPU type 'G64' is one more than the 64 GPU types") != std::string::npos,
                "%s", r.err.c_str());
  ck_assert(!fs::exists(d + "/c65.csv"));
}
END_TEST

// A Slurm site's sacct history and node list (the committed samples) convert
// to a trace and a cluster duet sim runs on; sacct from stdin; a bad line is
// named with its file and line, and nothing is written.
START_TEST(convert_slurm_site_then_sim) {
  const std::string d = tmpdir(), data = srcdir() + "/tests/unit/data";
  for (const char* sub : {"convert sacct --help", "convert slurm-nodes --help"}) {
    Out h = run(sub);
    ck_assert_msg(h.rc == 0 && h.out.find("Usage") != std::string::npos, "duet %s: %d", sub, h.rc);
  }
  Out t = run("convert sacct --node-speeds '" + data + "/node_speeds.csv' -o '" + d + "/site-trace.csv' < '" + data +
              "/sacct_site.txt'");
  ck_assert_msg(t.rc == 0, "rc %d: %s", t.rc, t.err.c_str());
  ck_assert_msg(
      t.err.find("3 GPU jobs; left out: 1 job steps, 1 never ran, 1 not finished, 1 CPU-only") != std::string::npos,
      "%s", t.err.c_str());
  ck_assert(slurp(d + "/site-trace.csv").find("101,60,1440,8,K80|V100,,bob,prod\n") != std::string::npos);
  Out c = run("convert slurm-nodes '" + data + "/scontrol_nodes.txt' --type-speed k80=0.3 --speeds-out '" + d +
              "/site-speeds.csv' -o '" + d + "/site-cluster.csv'");
  ck_assert_msg(c.rc == 0, "rc %d: %s", c.rc, c.err.c_str());
  ck_assert(slurp(d + "/site-speeds.csv").rfind("node,gpu_type,num_gpus,speed\nnode2,P100,2,0.5\n", 0) == 0);
  Out s = run("sim --trace '" + d + "/site-trace.csv' --cluster '" + d +
              "/site-cluster.csv' --order fifo --place first-fit --json");
  ck_assert_msg(s.rc == 0, "rc %d: %s", s.rc, s.err.c_str());
  ck_assert_int_eq(nlohmann::json::parse(s.out)["jobs"].get<int>(), 3);
  write(d + "/bad-sacct.txt", "JobID|Submit|Start|End|NodeList|AllocTRES|State\n1|yesterday|None|None|n||PENDING\n");
  Out e = run("convert sacct '" + d + "/bad-sacct.txt' -o '" + d + "/bad-site.csv'");
  ck_assert_msg(e.rc == 1 && e.err.find("bad-sacct.txt:2:") != std::string::npos &&
                    e.err.find("Submit: expected YYYY-MM-DDTHH:MM:SS") != std::string::npos,
                "rc %d: %s", e.rc, e.err.c_str());
  ck_assert(!fs::exists(d + "/bad-site.csv"));
}
END_TEST

// --model /dev/zero read until bad_alloc naming no file; a FIFO hung.
START_TEST(model_special_files_refused) {
  const std::string d = tmpdir();
  Out r = run_limited(60, "model info /dev/zero");
  ck_assert_msg(
      r.rc == 1 && r.err.find("/dev/zero: is a character device, expected a regular file (duet model file)") !=
                       std::string::npos,
      "rc %d: %s", r.rc, r.err.c_str());
  ck_assert_int_eq(mkfifo((d + "/fifo.model").c_str(), 0600), 0);
  r = run_limited(60, "model info '" + d + "/fifo.model'");
  ck_assert_msg(r.rc == 1 && r.err.find("fifo.model: is a FIFO") != std::string::npos, "rc %d: %s", r.rc,
                r.err.c_str());
}
END_TEST

// duet scenario generate: the same seed and spec give the same files, the
// recorded spec (--spec-out) gives them again, and duet sim reads them.
START_TEST(scenario_generate_is_deterministic_and_simulates) {
  const std::string d = tmpdir() + "/scen";
  fs::create_directories(d);
  const std::string gen = "scenario generate --seed 4 --family small --workload bursty --jobs 200 --load 1.1 ";
  Out a =
      run(gen + "--trace-out '" + d + "/t1.csv' --cluster-out '" + d + "/c1.csv' --spec-out '" + d + "/s.spec' --json");
  ck_assert_msg(a.rc == 0, "%s", a.err.c_str());
  auto j = nlohmann::json::parse(a.out);
  ck_assert_int_eq(j["jobs"].get<int>(), 200);
  ck_assert(std::fabs(j["offered_load"].get<double>() - 1.1) < 1e-3);
  ck_assert_msg(a.err.find("offered load 1.100") != std::string::npos, "%s", a.err.c_str());
  Out b = run(gen + "--trace-out '" + d + "/t2.csv' --cluster-out '" + d + "/c2.csv'");
  ck_assert(b.rc == 0);
  ck_assert(slurp(d + "/t1.csv") == slurp(d + "/t2.csv") && slurp(d + "/c1.csv") == slurp(d + "/c2.csv"));
  Out c = run("scenario generate --seed 4 --spec '" + d + "/s.spec' --trace-out '" + d + "/t3.csv' --cluster-out '" +
              d + "/c3.csv'");
  ck_assert_msg(c.rc == 0, "%s", c.err.c_str());
  ck_assert(slurp(d + "/t1.csv") == slurp(d + "/t3.csv") && slurp(d + "/c1.csv") == slurp(d + "/c3.csv"));
  ck_assert_msg(slurp(d + "/s.spec").find("# drawn for seed 4:\n# burst_ratio = ") != std::string::npos, "%s",
                slurp(d + "/s.spec").c_str());
  Out s =
      run("sim --trace '" + d + "/t1.csv' --cluster '" + d + "/c1.csv' --order gavel-las --place type-affinity --json");
  ck_assert_msg(s.rc == 0, "%s", s.err.c_str());
  ck_assert_int_eq(nlohmann::json::parse(s.out)["jobs"].get<int>(), 200);
  // A load these jobs cannot offer: said, and the load reached reported.
  Out w = run("scenario generate --seed 1 --family large --jobs 20 --load 0.9 --json --trace-out '" + d +
              "/t4.csv' --cluster-out '" + d + "/c4.csv'");
  ck_assert_msg(
      w.rc == 0 && w.err.find("warning: load 0.900 asked, but these jobs' GPUs add up to") != std::string::npos, "%s",
      w.err.c_str());
  const auto wj = nlohmann::json::parse(w.out);
  ck_assert(wj["offered_load"].get<double>() < 0.9 &&
            std::fabs(wj["offered_load"].get<double>() - wj["max_load"].get<double>()) < 1e-3);
  ck_assert(a.err.find("warning") == std::string::npos);
  Out l = run("scenario list");
  ck_assert(l.rc == 0 && l.out.find("heavy-tail") != std::string::npos &&
            l.out.find("pareto_alpha") != std::string::npos);
  // Errors name what was expected.
  Out e = run("scenario generate --family nope --trace-out x --cluster-out y");
  ck_assert(e.rc == 1 && e.err.find("unknown cluster family 'nope'") != std::string::npos);
  write(d + "/bad.spec", "jobs = 10\narrival = sometimes\n");
  e = run("scenario generate --spec '" + d + "/bad.spec' --trace-out x --cluster-out y");
  ck_assert_msg(e.rc == 1 && e.err.find("bad.spec:2:1: arrival: expected one of") != std::string::npos, "%s",
                e.err.c_str());
}
END_TEST

// Every command in duet-scenario(1)'s EXAMPLES runs, in order, in one directory.
START_TEST(scenario_man_page_examples_run) {
  const std::string d = tmpdir() + "/manex";
  fs::create_directories(d);
  std::ifstream man(srcdir() + "/man/duet-scenario.1");
  std::string line;
  bool in_examples = false, in_block = false;
  int ran = 0;
  while (std::getline(man, line)) {
    if (line.rfind(".SH", 0) == 0) in_examples = line == ".SH EXAMPLES";
    if (!in_examples) continue;
    if (line == ".nf") in_block = true;
    if (line == ".fi") in_block = false;
    if (!in_block || line.rfind("duet ", 0) != 0) continue;
    std::string cmd;
    for (size_t i = 0; i < line.size(); ++i) {
      if (line[i] == '\\' && i + 1 < line.size() && line[i + 1] == '-') continue;  // roff's \- is -
      cmd += line[i];
    }
    const std::string sh = "cd '" + d + "' && DUET_DATA_DIR='" + srcdir() + "' DUET_ETC_DIR='" + srcdir() + "/etc' '" +
                           fs::absolute(duet()).string() + "'" + cmd.substr(4) + " >out.txt 2>err.txt";
    int rc = std::system(sh.c_str());
    ck_assert_msg(WIFEXITED(rc) && WEXITSTATUS(rc) == 0, "'%s' failed: %s", cmd.c_str(), slurp(d + "/err.txt").c_str());
    ++ran;
  }
  ck_assert_int_ge(ran, 6);
}
END_TEST

// duet check-config: "ok: ..." and 0 on a good setup; each problem on a
// line of its own and 1 on a bad one; 2 on a usage error (duet-check-config(1)).
START_TEST(check_config_exit_status) {
  const std::string d = tmpdir() + "/cc";
  std::filesystem::create_directories(d);
  chmod(d.c_str(), 0755);
  std::filesystem::copy_file(srcdir() + "/models/duet.model", d + "/duet.model",
                             std::filesystem::copy_options::overwrite_existing);
  chmod((d + "/duet.model").c_str(), 0644);
  write(d + "/duet.conf", "ModelPath=duet.model\nPlacementModelPath=duet.model\n");
  // SlurmUser: whoever runs the suite, who owns the files
  const passwd* pw = getpwuid(getuid());
  write(d + "/slurm.conf", (pw ? "SlurmUser=" + std::string(pw->pw_name) + "\n" : std::string()) +
                               "PriorityType=priority/duet\nSelectType=select/duet\nSelectTypeParameters=CR_Core\n"
                               "GresTypes=gpu\n");
  chmod((d + "/duet.conf").c_str(), 0644);
  chmod((d + "/slurm.conf").c_str(), 0644);
  Out ok = run("check-config --slurm-conf '" + d + "/slurm.conf'");
  ck_assert_msg(ok.rc == 0, "rc %d: %s%s", ok.rc, ok.out.c_str(), ok.err.c_str());
  ck_assert_msg(ok.out.rfind("ok: " + d + "/duet.conf: ", 0) == 0, "%s", ok.out.c_str());
  ck_assert_msg(ok.out.find('\n') == ok.out.size() - 1, "not one line: %s", ok.out.c_str());
  write(d + "/duet.conf", "ModelPath=duet.model\nPlacementModelPath=duet.model\nRanker=fastest\n");
  Out bad = run("check-config --slurm-conf '" + d + "/slurm.conf'");
  ck_assert_msg(bad.rc == 1, "rc %d: %s%s", bad.rc, bad.out.c_str(), bad.err.c_str());
  ck_assert_msg(bad.out.rfind(d + "/duet.conf:3: Ranker: expected one of model | prefer-fast | none", 0) == 0, "%s",
                bad.out.c_str());
  ck_assert_msg(bad.err == "duet: 1 problem in the duet setup\n", "%s", bad.err.c_str());
  Out usage = run("check-config --confx x");
  ck_assert_msg(usage.rc == 2, "rc %d", usage.rc);
}
END_TEST

int main() {
  if (access(duet().c_str(), X_OK) != 0) {
    std::printf("SKIP: %s not built\n", duet().c_str());
    return 77;
  }
  Suite* s = suite_create("policy_cli");
  TCase* tc = tcase_create("cli");
  tcase_set_timeout(tc, 240);
  tcase_add_test(tc, help_everywhere);
  tcase_add_test(tc, sim_no_preemption_keeps_running_jobs);
  tcase_add_test(tc, sim_jobs_out_and_consolidation);
  tcase_add_test(tc, usage_errors_exit_2);
  tcase_add_test(tc, check_config_exit_status);
  tcase_add_test(tc, convert_then_sim_json_is_deterministic);
  tcase_add_test(tc, errors_name_file_and_line);
  tcase_add_test(tc, eval_writes_table_json_and_plots);
  tcase_add_test(tc, convert_philly_window);
  tcase_add_test(tc, protocol_runs_loads_and_seeds);
  tcase_add_test(tc, generalize_protocol_refuses_bad_arguments);
  tcase_add_test(tc, sim_refuses_huge_times);
  tcase_add_test(tc, convert_pai_refuses_over_64_types);
  tcase_add_test(tc, convert_slurm_site_then_sim);
  tcase_add_test(tc, model_special_files_refused);
  tcase_add_test(tc, model_set_changes_the_spread_rule_only);
  tcase_add_test(tc, scenario_generate_is_deterministic_and_simulates);
  tcase_add_test(tc, scenario_man_page_examples_run);
  suite_add_tcase(s, tc);
  SRunner* r = srunner_create(s);
  srunner_set_fork_status(r, CK_NOFORK);
  srunner_run_all(r, CK_NORMAL);
  int failed = srunner_ntests_failed(r);
  srunner_free(r);
  fs::remove_all(tmpdir());
  return failed ? 1 : 0;
}
