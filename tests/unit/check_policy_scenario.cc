// The scenario generator (policy/scenario) and the heterogeneity-aware
// baselines (type-affinity, gavel-las): determinism, files that read back,
// the offered load and tail index asked for, families inside their ranges,
// and the baselines doing what they are for on generated clusters.
#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "policy/io/csv.h"
#include "policy/io/pai.h"
#include "policy/io/philly.h"
#include "policy/model/job_types.h"
#include "policy/registry/policy_registry.h"
#include "policy/scenario/scenario.h"
#include "policy/sim/simulator.h"
#include "tests/unit/test_data.h"

// Last: check.h defines a fail() macro that breaks <ios>.
#include <check.h>
#include "tests/unit/run_suite.h"

using namespace duet;
using test_support::gavel_table;

namespace {

const ScenarioSources& sources() {
  static const Trace philly = read_philly(test_support::source_path("data/philly/philly.csv"));
  static const ClusterSpec pai = read_pai(test_support::source_path("data/pai/pai_machine_spec.csv")).cluster;
  static const ScenarioSources s{&philly, &pai};
  return s;
}

ScenarioSpec spec(const std::string& family, const std::string& workload, int jobs = 300) {
  ScenarioSpec s;
  apply_family(s, family);
  apply_workload(s, workload);
  s.jobs = jobs;
  return s;
}

std::string trace_text(const Scenario& sc) {
  std::ostringstream o;
  write_trace(o, sc.trace);
  return o.str();
}

std::string cluster_text(const Scenario& sc) {
  std::ostringstream o;
  write_cluster(o, sc.cluster);
  return o.str();
}

const char* const kFamilies[] = {"mixed", "gavel", "small", "large", "flat", "pai"};
const char* const kWorkloads[] = {"lognormal", "heavy-tail", "diurnal", "bursty", "philly", "philly-vc"};

}  // namespace

START_TEST(same_seed_and_spec_give_identical_files) {
  for (const char* w : kWorkloads) {
    const ScenarioSpec s = spec("mixed", w);
    const Scenario a = generate_scenario(s, 42, gavel_table(), sources());
    const Scenario b = generate_scenario(s, 42, gavel_table(), sources());
    const Scenario c = generate_scenario(s, 43, gavel_table(), sources());
    ck_assert(trace_text(a) == trace_text(b));
    ck_assert(cluster_text(a) == cluster_text(b));
    ck_assert_msg(trace_text(a) != trace_text(c), "%s: seeds 42 and 43 gave the same trace", w);
  }
  // The cluster has its own stream: a workload key leaves it as it was.
  ScenarioSpec s = spec("mixed", "lognormal");
  const std::string before = cluster_text(generate_scenario(s, 5, gavel_table()));
  s.duration_sigma = {0.5, 0.5};
  ck_assert(cluster_text(generate_scenario(s, 5, gavel_table())) == before);
}
END_TEST

START_TEST(every_family_and_workload_reads_back) {
  for (const char* f : kFamilies)
    for (const char* w : kWorkloads)
      for (uint64_t seed : {1, 2}) {
        const Scenario sc = generate_scenario(spec(f, w, 200), seed, gavel_table(), sources());
        std::istringstream ti(trace_text(sc)), ci(cluster_text(sc));
        const Trace t = read_trace(ti, "t.csv");
        const ClusterModel c = build_cluster(read_cluster(ci, "c.csv"), gavel_table());
        ck_assert_int_eq(t.jobs.size(), 200);
        ck_assert(!assign_job_types(t, gavel_table(), 1).empty());  // every job type is known
        for (const JobSpec& j : t.jobs) {
          ck_assert_msg(j.gpus >= 1 && j.gpus <= c.total_gpus, "%s/%s: job of %d GPUs on %d", f, w, j.gpus,
                        c.total_gpus);
          ck_assert(j.duration >= 0 && !j.user.empty() && !j.vc.empty());
        }
        // The load asked, or the most these jobs can offer where that is less.
        const double want = std::min(sc.resolved.load.lo, sc.max_load);
        ck_assert_msg(std::fabs(offered_load(t, c) - want) < 2e-3 * want, "%s/%s seed %d: offered load %f, asked %f", f,
                      w, static_cast<int>(seed), offered_load(t, c), want);
      }
}
END_TEST

START_TEST(offered_load_follows_the_spec) {
  for (const char* arrival : {"poisson", "diurnal", "mmpp"})
    for (double load : {0.5, 1.0, 1.5}) {
      ScenarioSpec s = spec("small", "lognormal", 500);
      apply_setting(s, "arrival", arrival);
      s.load = {load, load};
      const Scenario sc = generate_scenario(s, 11, gavel_table());
      std::istringstream ti(trace_text(sc)), ci(cluster_text(sc));
      const double got = offered_load(read_trace(ti, "t"), build_cluster(read_cluster(ci, "c"), gavel_table()));
      ck_assert_msg(std::fabs(got - load) < 0.01 * load, "%s at %.1f: offered %.4f", arrival, load, got);
    }
  // A range is drawn inside itself.
  ScenarioSpec s = spec("small", "lognormal", 100);
  apply_setting(s, "load", "0.5..1.5");
  std::set<double> seen;
  for (uint64_t seed = 1; seed <= 10; ++seed) {
    const Scenario sc = generate_scenario(s, seed, gavel_table());
    ck_assert(sc.offered_load >= 0.5 - 1e-3 && sc.offered_load <= 1.5 + 1e-3);
    seen.insert(std::round(sc.resolved.load.lo * 100));
  }
  ck_assert(seen.size() > 5);
}
END_TEST

// A job longer than the window of submissions offers only the window's
// worth of work. Counting all of it, one 1000-hour job of 64 GPUs among 1-GPU
// jobs of an hour would stretch the submissions over weeks and leave the
// others an idle cluster: each job would meet about 0.1 others.
START_TEST(a_job_longer_than_the_window_counts_the_window) {
  std::vector<JobSpec> jobs(100);
  for (JobSpec& j : jobs) {
    j.gpus = 1;
    j.duration = 3600;
  }
  ck_assert(std::fabs(window_load(jobs, 36000, 10) - 1.0) < 1e-12);  // 100 GPU-h over 10 h on 10 GPUs
  jobs[0].gpus = 64;
  jobs[0].duration = 3.6e6;
  ck_assert(std::fabs(window_load(jobs, 36000, 10) - (99 * 3600 + 64 * 36000.0) / 36000 / 10) < 1e-12);
  ck_assert(std::fabs(window_load(jobs, 1800, 10) - (99 * 1800 + 64 * 1800.0) / 1800 / 10) < 1e-12);  // every job
  ck_assert(window_load({}, 100, 10) == 0 && window_load(jobs, 100, 0) == 0);

  // Heavy tails: jobs longer than the window exist, and the load asked is
  // still the one offered (the span is bisected, not divided out).
  ScenarioSpec s = spec("small", "heavy-tail", 600);
  apply_setting(s, "pareto_alpha", "1.1");
  s.load = {0.9, 0.9};
  int clipped = 0;
  for (uint64_t seed : {1, 2, 3}) {
    const Scenario sc = generate_scenario(s, seed, gavel_table());
    ck_assert_msg(std::fabs(sc.offered_load - 0.9) < 2e-3 && !sc.load_out_of_reach(), "seed %d: offered %f",
                  static_cast<int>(seed), sc.offered_load);
    const double last = sc.trace.jobs.back().submit;
    double unclipped = 0;
    for (const JobSpec& j : sc.trace.jobs) unclipped += j.duration * j.gpus;
    clipped += unclipped / last / sc.capacity > 0.95;
  }
  ck_assert_msg(clipped > 0, "no seed has a job that outlasts its window");

  // A load the jobs cannot offer: 20 one-GPU jobs on a cluster of far more
  // GPUs. They are submitted within the shortest job, and the scenario says
  // so instead of claiming the load.
  ScenarioSpec big = spec("large", "lognormal", 20);
  big.load = {0.9, 0.9};
  const Scenario sc = generate_scenario(big, 1, gavel_table());
  ck_assert(sc.max_load < 0.9 && sc.load_out_of_reach());
  ck_assert_msg(std::fabs(sc.offered_load - sc.max_load) < 1e-3 * sc.max_load, "offered %f, most %f", sc.offered_load,
                sc.max_load);
  double shortest = 1e300;
  for (const JobSpec& j : sc.trace.jobs) shortest = std::min(shortest, j.duration);
  ck_assert(sc.trace.jobs.back().submit <= std::max(1.0, shortest) + 1e-3);
}
END_TEST

// Hill's estimator on the top 5% of 20,000 Pareto durations: within 10% of
// the tail index asked for (its standard error is about 3% here).
START_TEST(pareto_tail_index_is_the_one_asked) {
  for (double alpha : {1.1, 1.5, 2.0, 2.5}) {
    ScenarioSpec s = spec("small", "heavy-tail", 20000);
    s.pareto_alpha = {alpha, alpha};
    s.duration_max_s = 1e8;  // no cap inside the tail
    const Scenario sc = generate_scenario(s, 3, gavel_table());
    std::vector<double> d;
    for (const JobSpec& j : sc.trace.jobs) d.push_back(j.duration);
    const double est = hill_tail_index(d, d.size() / 20);
    ck_assert_msg(std::fabs(est - alpha) < 0.1 * alpha, "alpha %.2f: Hill estimate %.3f", alpha, est);
    ck_assert(*std::min_element(d.begin(), d.end()) >= s.pareto_min_s.lo - 1e-3);
  }
  // Log-normal: the sample median is the median asked for.
  ScenarioSpec s = spec("small", "lognormal", 20000);
  const Scenario sc = generate_scenario(s, 3, gavel_table());
  std::vector<double> d;
  for (const JobSpec& j : sc.trace.jobs) d.push_back(j.duration);
  std::nth_element(d.begin(), d.begin() + d.size() / 2, d.end());
  ck_assert_msg(std::fabs(d[d.size() / 2] / 1800 - 1) < 0.05, "median %.1f", d[d.size() / 2]);
}
END_TEST

START_TEST(cluster_families_honour_their_ranges) {
  for (const char* f : kFamilies) {
    ScenarioSpec fam;
    apply_family(fam, f);
    std::set<int> type_counts;
    for (uint64_t seed = 1; seed <= 25; ++seed) {
      const Scenario sc = generate_scenario(spec(f, "lognormal", 50), seed, gavel_table(), sources());
      const int gpus = sc.cluster.total_gpus();
      std::map<std::string, double> types;  // type -> speed
      std::map<std::string, std::pair<std::string, int>> racks;
      for (const MachineSpec& m : sc.cluster.machines) {
        types[m.gpu_type] = m.speed;
        auto& r = racks[m.rack];
        ck_assert_msg(r.first.empty() || r.first == m.gpu_type, "%s: rack %s mixes types", f, m.rack.c_str());
        r.first = m.gpu_type;
        ++r.second;
      }
      if (fam.cluster_source == "pai") {  // a sample keeps whole machines and every type: about the size asked
        ck_assert_msg(gpus >= 0.8 * fam.cluster_gpus.lo && gpus <= 1.2 * fam.cluster_gpus.hi, "pai: %d GPUs", gpus);
        continue;
      }
      ck_assert_msg(gpus >= fam.cluster_gpus.lo && gpus <= fam.cluster_gpus.hi, "%s seed %d: %d GPUs", f,
                    static_cast<int>(seed), gpus);
      ck_assert_msg(types.size() >= fam.gpu_types.lo && types.size() <= fam.gpu_types.hi, "%s: %zu types", f,
                    types.size());
      type_counts.insert(static_cast<int>(types.size()));
      int from_table = 0;
      for (const auto& [name, speed] : types) {
        if (speed < 0) {
          ++from_table;
          ck_assert(gavel_table().find_gpu(name) >= 0);
        } else {
          ck_assert_msg(speed >= fam.speed.lo - 1e-9 && speed <= fam.speed.hi + 1e-9, "%s: speed %f", f, speed);
        }
      }
      ck_assert_int_le(from_table, fam.table_types);
      for (const MachineSpec& m : sc.cluster.machines)
        ck_assert(std::count(fam.gpus_per_machine.begin(), fam.gpus_per_machine.end(), m.gpus) == 1);
      for (const auto& [rack, r] : racks) ck_assert_int_le(r.second, fam.rack_machines);
    }
    if (fam.gpu_types.hi > fam.gpu_types.lo && fam.cluster_source != "pai")
      ck_assert_msg(type_counts.size() > 1, "%s: always %d types", f, *type_counts.begin());
  }
}
END_TEST

START_TEST(spec_text_reads_back_and_errors_name_the_line) {
  ScenarioSpec s;
  apply_spec_text(s, "# a comment\nfamily = gavel\n\nworkload = bursty\njobs = 77  # trailing\nload = 0.6..1.4\n",
                  "s.spec");
  ck_assert_int_eq(s.jobs, 77);
  ck_assert(s.load.lo == 0.6 && s.load.hi == 1.4);
  ck_assert(s.arrival == "mmpp" && s.family == "gavel" && s.gpus_per_machine == std::vector<int>{4});
  // A file's own keys win over its preset wherever the preset line is.
  ScenarioSpec t;
  apply_spec_text(t, "gpus_per_machine = 2\nfamily = gavel\n", "s.spec");
  ck_assert(t.gpus_per_machine == std::vector<int>{2});
  // format_spec reads back equal.
  ScenarioSpec u;
  apply_spec_text(u, format_spec(s), "again");
  ck_assert(format_spec(u) == format_spec(s));
  for (const char* bad : {"jobs = 0\n", "arrival = sometimes\n", "nokey = 1\n", "load = 2..1\n", "just text\n"}) {
    ScenarioSpec v;
    try {
      apply_spec_text(v, std::string("# c\n") + bad, "bad.spec");
      ck_abort_msg("accepted %s", bad);
    } catch (const InputError& e) { ck_assert_msg(std::string(e.what()).rfind("bad.spec:2:", 0) == 0, "%s", e.what()); }
  }
}
END_TEST

// For every job type, type-affinity takes the machine where that job type
// runs fastest, R(jt, type) x the machine's factor.
START_TEST(type_affinity_places_by_the_jobs_own_speed) {
  const ThroughputTable& tt = gavel_table();
  ClusterSpec cs;
  for (const auto& [name, type, speed] : {std::tuple{"a", "K80", -1.0}, std::tuple{"b", "P100", -1.0},
                                          std::tuple{"c", "V100", -1.0}, std::tuple{"d", "T4", 0.52}}) {
    MachineSpec m;
    m.name = name, m.gpu_type = type, m.gpus = 4, m.speed = speed;
    cs.machines.push_back(m);
  }
  const ClusterModel cm = build_cluster(cs, tt);
  std::vector<std::string> names;
  for (const GpuType& g : cm.gpu_types) names.push_back(g.name);
  std::vector<MachineView> ms(4);
  for (int m = 0; m < 4; ++m) {
    ms[m].gpu_type = cm.machines[m].type;
    ms[m].total_gpus = ms[m].free_gpus = 4;
    ms[m].speed = cm.gpu_types[cm.machines[m].type].mean_speed;
  }
  ClusterView v;
  v.gpu_types = names;
  v.machines = ms;
  v.total_gpus = v.free_gpus = 16;
  PolicyContext ctx;
  ctx.throughputs = &tt;
  auto p = make_placement("type-affinity", ctx);
  ck_assert_str_eq(p->name().c_str(), "type-affinity");
  int differs = 0;
  for (int jt = 0; jt < tt.job_types(); ++jt) {
    JobView j;
    j.id = jt + 1;
    j.gpus = 1;
    j.job_type = tt.job_type_name(jt);
    auto speed = [&](int m) {
      const GpuType& g = cm.gpu_types[cm.machines[m].type];
      return g.table_gpu >= 0 ? tt.speed_ratio(jt, g.table_gpu) : g.flat_speed;
    };
    int best = 0;
    for (int m = 1; m < 4; ++m)
      if (speed(m) > speed(best)) best = m;
    const int got = (*p->place(j, v))[0].machine;
    ck_assert_msg(got == best, "%s: machine %d, fastest for it %d", j.job_type.data(), got, best);
    differs += got != (*make_placement("fastest-first")->place(j, v))[0].machine;
  }
  ck_assert_msg(differs > 0, "type-affinity placed every job type as fastest-first does");
}
END_TEST

// gavel-las counts service at the speed the job got: of two jobs with the
// same GPU-seconds, the one placed on the slow machine stays in the first
// queue and goes first, though it came later.
START_TEST(gavel_las_counts_service_at_the_speed_got) {
  const ThroughputTable& tt = gavel_table();
  std::vector<std::string> names{"FAST", "SLOW"};
  std::vector<MachineView> ms(2);
  ms[0].gpu_type = 0, ms[0].speed = 1.0;
  ms[1].gpu_type = 1, ms[1].speed = 0.25;
  for (MachineView& m : ms) m.total_gpus = m.free_gpus = 1;
  ClusterView v;
  v.gpu_types = names;
  v.machines = ms;
  v.total_gpus = v.free_gpus = 2;
  PolicyContext ctx;
  ctx.throughputs = &tt;
  auto place = make_placement("type-affinity", ctx);
  auto order = make_ordering("gavel-las", ctx);
  order->pair_with(*place);
  ck_assert(order->preemptive());
  std::vector<JobView> jobs(2);
  for (int k = 0; k < 2; ++k) jobs[k].id = k + 1, jobs[k].gpus = 1, jobs[k].submit_s = k;
  std::vector<size_t> out;
  order->rank(jobs, v, out);
  ck_assert_int_eq((*place->place(jobs[0], v))[0].machine, 0);  // job 1 on the fast machine
  ms[0].free_gpus = 0;
  ck_assert_int_eq((*place->place(jobs[1], v))[0].machine, 1);  // job 2 on the slow one
  for (JobView& j : jobs) j.running = true, j.attained_gpu_s = 4000, j.run_s = 4000;
  v.now_s = 4000;
  order->rank(jobs, v, out);
  ck_assert(out == (std::vector<size_t>{1, 0}));
  // The next re-ranking: job 1 reaches the second limit (7200) at speed 1
  // before job 2 reaches the first (3250) at speed 0.25.
  ck_assert(std::fabs(order->next_decision_s() - (4000 + (7200 - 4000))) < 1e-6);
  // Without type-affinity's speeds it is LAS on GPU-seconds: arrival order.
  auto plain = make_ordering("gavel-las", ctx);
  plain->rank(jobs, v, out);
  ck_assert(out == (std::vector<size_t>{0, 1}));
}
END_TEST

// On generated heterogeneous clusters (Gavel's types, Pareto durations) the
// heterogeneity-aware pair beats fifo/first-fit on mean JCT: the median
// ratio over 5 seeds is below 1.
START_TEST(gavel_las_type_affinity_beats_fifo_first_fit) {
  std::vector<double> ratio;
  const PriceTable* no_prices = nullptr;
  for (uint64_t seed = 1; seed <= 5; ++seed) {
    ScenarioSpec s = spec("gavel", "heavy-tail", 300);
    s.cluster_gpus = {16, 32};
    const Scenario sc = generate_scenario(s, seed, gavel_table());
    const ClusterModel cm = build_cluster(sc.cluster, gavel_table());
    auto jct = [&](const char* o, const char* p) {
      PolicyContext ctx;
      ctx.seed = seed;
      ctx.throughputs = &gavel_table();
      auto ord = make_ordering(o, ctx);
      auto plc = make_placement(p, ctx);
      SimOptions so;
      so.model.seed = seed;
      Simulator sim(sc.trace, cm, gavel_table(), no_prices, so);
      sim.set_policies(ord.get(), plc.get());
      return sim.run().avg_jct_s;
    };
    ratio.push_back(jct("gavel-las", "type-affinity") / jct("fifo", "first-fit"));
  }
  std::sort(ratio.begin(), ratio.end());
  ck_assert_msg(ratio[2] < 1, "median mean-JCT ratio %.3f (%.3f .. %.3f)", ratio[2], ratio[0], ratio[4]);
}
END_TEST

int main() {
  Suite* s = suite_create("policy_scenario");
  TCase* tc = tcase_create("scenario");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, same_seed_and_spec_give_identical_files);
  tcase_add_test(tc, every_family_and_workload_reads_back);
  tcase_add_test(tc, offered_load_follows_the_spec);
  tcase_add_test(tc, a_job_longer_than_the_window_counts_the_window);
  tcase_add_test(tc, pareto_tail_index_is_the_one_asked);
  tcase_add_test(tc, cluster_families_honour_their_ranges);
  tcase_add_test(tc, spec_text_reads_back_and_errors_name_the_line);
  tcase_add_test(tc, type_affinity_places_by_the_jobs_own_speed);
  tcase_add_test(tc, gavel_las_counts_service_at_the_speed_got);
  tcase_add_test(tc, gavel_las_type_affinity_beats_fifo_first_fit);
  suite_add_tcase(s, tc);
  return test_support::run_suite(s);
}
