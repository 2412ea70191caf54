// duet check-config's checks (plugins/check/check_config.h) on files made
// here: a good setup, a duet.conf with bad keys, a world-writable model, a
// missing speeds file, slurm.conf lines missing or wrong, an Include, and
// the warnings about preemption.
// SlurmUser is whoever runs the suite, so the trust checks pass for the
// files made here without root.
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "plugins/check/check_config.h"
#include "plugins/check/slurm_conf_file.h"
#include "plugins/ordering/ordering_model.h"
#include "plugins/select/duet/placement_model.h"
#include "tests/unit/run_suite.h"

#include <check.h>  // last: it defines a fail() macro

using namespace duet::plugin;

namespace {

std::string g_dir;

std::string write(const std::string& name, const std::string& text) {
  std::string path = g_dir + "/" + name;
  std::ofstream(path) << text;
  chmod(path.c_str(), 0644);
  return path;
}

std::string me() {
  const passwd* pw = getpwuid(getuid());
  return pw ? pw->pw_name : "root";
}

// The slurm.conf lines of etc/slurm.conf.d/duet.conf, for `me`.
std::string good_slurm_conf() {
  return "ClusterName=t\nSlurmUser=" + me() +
         "\nPriorityType=priority/multifactor\nPrioritySiteFactorPlugin=site_factor/duet\n"
         "PrioritySiteFactorParameters=weight=10000\nSelectType=select/duet\nSelectTypeParameters=CR_Core\n"
         "GresTypes=gpu\nNodeName=n1 Gres=gpu:v100:4 CPUs=8\n";
}

// The shipped model, copied next to duet.conf as the documented example does.
void copy_model(const std::string& name) {
  const char* top = std::getenv("top_srcdir");
  std::ifstream in(std::string(top ? top : ".") + "/models/duet.model", std::ios::binary);
  ck_assert_msg(in.good(), "models/duet.model not found (set top_srcdir)");
  std::ostringstream text;
  text << in.rdbuf();
  write(name, text.str());
}

const char* kGoodConf = "Scorer=model\nModelPath=duet.model\nRanker=model\nPlacementModelPath=duet.model\n";

CheckResult check(const std::string& conf, const std::string& slurm_conf) {
  return check_duet_setup({g_dir + "/" + conf, g_dir + "/" + slurm_conf, true});
}

// All problems, one a line, for messages and substring checks.
std::string all(const CheckResult& r) {
  std::string s;
  for (const CheckProblem& p : r.problems) s += p.text() + "\n";
  return s;
}

#define CK_HAS(r, text) \
  ck_assert_msg(all(r).find(text) != std::string::npos, "'%s' not in:\n%s", std::string(text).c_str(), all(r).c_str())

void setup() {
  char tmpl[] = "/tmp/check_check_config.XXXXXX";
  ck_assert(mkdtemp(tmpl));
  g_dir = tmpl;
  chmod(g_dir.c_str(), 0755);
  copy_model("duet.model");
  write("duet.conf", kGoodConf);
  write("slurm.conf", good_slurm_conf());
}

void teardown() {
  std::string cmd = "rm -rf '" + g_dir + "'";
  ck_assert_int_eq(std::system(cmd.c_str()), 0);
}

}  // namespace

START_TEST(test_good_setup_passes) {
  CheckResult r = check("duet.conf", "slurm.conf");
  ck_assert_msg(r.problems.empty(), "%s", all(r).c_str());
  ck_assert_msg(r.summary.find("cksum") != std::string::npos, "%s", r.summary.c_str());
  ck_assert_msg(r.summary.find("site_factor/duet") != std::string::npos, "%s", r.summary.c_str());
}
END_TEST

START_TEST(test_bad_keys_name_file_and_line) {
  write("bad.conf", std::string(kGoodConf) + "# fine\nRescoreInterval=0\nRankr=model\n");
  CheckResult r = check("bad.conf", "slurm.conf");
  ck_assert_int_eq(r.problems.size(), 2);
  CK_HAS(r, g_dir + "/bad.conf:6: RescoreInterval: expected an integer 1..3600, got '0'");
  CK_HAS(r, g_dir + "/bad.conf:7: unknown key 'Rankr'");
}
END_TEST

START_TEST(test_missing_conf_given_is_a_problem) {
  CheckResult r = check("nope.conf", "slurm.conf");
  CK_HAS(r, g_dir + "/nope.conf: not found");
}
END_TEST

START_TEST(test_missing_model_names_its_key_line) {
  write("m.conf", "Scorer=model\nModelPath=gone.model\nRanker=none\n");
  CheckResult r = check("m.conf", "slurm.conf");
  ck_assert_int_eq(r.problems.size(), 1);
  CK_HAS(r, g_dir + "/m.conf:2: ModelPath " + g_dir + "/gone.model");
}
END_TEST

START_TEST(test_not_a_model_is_refused) {
  write("junk.model", "not a model\n");
  write("j.conf", "Scorer=fallback\nRanker=model\nPlacementModelPath=junk.model\n");
  CheckResult r = check("j.conf", "slurm.conf");
  ck_assert_int_eq(r.problems.size(), 1);
  CK_HAS(r, g_dir + "/j.conf:3: PlacementModelPath " + g_dir + "/junk.model");
}
END_TEST

START_TEST(test_world_writable_model_is_refused) {
  chmod((g_dir + "/duet.model").c_str(), 0666);
  CheckResult r = check("duet.conf", "slurm.conf");
  // one file for both agents: said once
  ck_assert_int_eq(r.problems.size(), 1);
  CK_HAS(r, g_dir + "/duet.model: refused: the file is writable by others (mode 0666)");
}
END_TEST

START_TEST(test_world_writable_conf_is_refused) {
  chmod((g_dir + "/duet.conf").c_str(), 0646);
  CheckResult r = check("duet.conf", "slurm.conf");
  CK_HAS(r, g_dir + "/duet.conf: refused: the file is writable by others");
}
END_TEST

START_TEST(test_missing_speeds_file_is_named) {
  write("s.conf", std::string(kGoodConf) + "NodeSpeedsFile=speeds.csv\n");
  CheckResult r = check("s.conf", "slurm.conf");
  ck_assert_int_eq(r.problems.size(), 1);
  CK_HAS(r, g_dir + "/s.conf:5: NodeSpeedsFile " + g_dir + "/speeds.csv");
  // the model itself is fine: nothing blames it
  ck_assert(all(r).find("PlacementModelPath") == std::string::npos);
}
END_TEST

START_TEST(test_bad_job_type_speeds_file_is_named) {
  write("gavel.json", "{\"v100\": {\n  \"('ResNet-50', 1)\": \n");
  write("t.conf", std::string(kGoodConf) + "JobTypeSpeedsFile=gavel.json\n");
  CheckResult r = check("t.conf", "slurm.conf");
  ck_assert_int_eq(r.problems.size(), 1);
  CK_HAS(r, g_dir + "/t.conf:5: JobTypeSpeedsFile " + g_dir + "/gavel.json:3:");
  ck_assert(all(r).find("PlacementModelPath") == std::string::npos);
}
END_TEST

START_TEST(test_prefer_fast_needs_speeds) {
  write("p.conf", "Scorer=fallback\nRanker=prefer-fast\n");
  CheckResult r = check("p.conf", "slurm.conf");
  ck_assert_int_eq(r.problems.size(), 1);
  CK_HAS(r, g_dir + "/p.conf:2: Ranker=prefer-fast needs NodeSpeedsFile");
  write("speeds.csv", "node,speed\nn1,1.5\n");
  write("p.conf", "Scorer=fallback\nRanker=prefer-fast\nNodeSpeedsFile=speeds.csv\n");
  r = check("p.conf", "slurm.conf");
  ck_assert_msg(r.problems.empty(), "%s", all(r).c_str());
}
END_TEST

START_TEST(test_slurm_conf_missing_select_line) {
  std::string text = good_slurm_conf();
  text.replace(text.find("SelectType=select/duet\n"), 23, "");
  write("noselect.conf", text);
  CheckResult r = check("duet.conf", "noselect.conf");
  ck_assert_int_eq(r.problems.size(), 1);
  CK_HAS(r, g_dir + "/noselect.conf: SelectType not set: expected SelectType=select/duet");
}
END_TEST

START_TEST(test_slurm_conf_wrong_lines) {
  write("wrong.conf", "SlurmUser=" + me() +
                          "\nPriorityType=priority/basic\nPrioritySiteFactorPlugin=site_factor/duet\n"
                          "SelectType=select/cons_tres\nSelectTypeParameters=CR_Lllp\nGresTypes=mps\n");
  CheckResult r = check("duet.conf", "wrong.conf");
  ck_assert_int_eq(r.problems.size(), 4);
  CK_HAS(r, g_dir +
                "/wrong.conf:3: site_factor/duet needs PriorityType=priority/multifactor; PriorityType is "
                "'priority/basic'");
  CK_HAS(r, g_dir + "/wrong.conf:4: expected SelectType=select/duet, got select/cons_tres");
  CK_HAS(r, g_dir + "/wrong.conf:5: SelectTypeParameters: expected a cons_tres resource");
  CK_HAS(r, g_dir + "/wrong.conf:6: GresTypes does not list gpu");
  write("wrong.conf",
        "PriorityType=priority/multifactor\nSelectType=select/duet\nSelectTypeParameters=CR_Core\n"
        "GresTypes=gpu\n");
  r = check("duet.conf", "wrong.conf");
  ck_assert_int_eq(r.problems.size(), 1);
  CK_HAS(r, g_dir +
                "/wrong.conf:1: no duet ordering plugin: expected PriorityType=priority/multifactor with "
                "PrioritySiteFactorPlugin=site_factor/duet (or PriorityType=priority/duet), got "
                "PriorityType=priority/multifactor");
}
END_TEST

START_TEST(test_slurm_conf_priority_duet_and_include) {
  write("duet-lines.conf", "PriorityType=priority/duet\nSelectType=select/duet\n");
  write("inc.conf", "SlurmUser=" + me() +
                        "\nSelectType=select/cons_tres\n  include duet-lines.conf # the duet lines\n" +
                        "SelectTypeParameters=CR_Core_Memory\nGresTypes=gpu,mps\n");
  CheckResult r = check("duet.conf", "inc.conf");
  ck_assert_msg(r.problems.empty(), "%s", all(r).c_str());
  ck_assert_msg(r.summary.find("priority/duet, select/duet") != std::string::npos, "%s", r.summary.c_str());
  write("inc.conf", "Include missing.conf\n");
  r = check("duet.conf", "inc.conf");
  CK_HAS(r, g_dir + "/inc.conf:1: Include: " + g_dir + "/missing.conf: cannot read");
}
END_TEST

// All warnings, one a line.
std::string warnings(const CheckResult& r) {
  std::string s;
  for (const CheckProblem& p : r.warnings) s += p.text() + "\n";
  return s;
}

// Preemption=requeue with the shipped model (preemptive) preempts; with a
// model that is not preemptive (`duet model init`) or a builtin scorer it
// runs but preempts nothing: a warning, not a problem; Slurm's own
// PreemptType beside it: a warning naming its line; a bad value is a problem.
// Before the switch: Slurm's defaults fail the live check and pass as
// duet-admin enable will leave them, in either mode; a key it owns in an
// Included file, or a weight it keeps that is wrong, is a problem.
START_TEST(test_pending_checks_the_lines_enable_writes) {
  const std::string defaults = "ClusterName=t\nSlurmUser=" + me() +
                               "\nPriorityType=priority/multifactor\nSelectType=select/cons_tres\n"
                               "SelectTypeParameters=CR_Core\nGresTypes=gpu\nNodeName=n1 Gres=gpu:v100:4 CPUs=8\n";
  write("defaults.conf", defaults);
  CheckInput in{g_dir + "/duet.conf", g_dir + "/defaults.conf", true};
  CheckResult live = check_duet_setup(in);
  CK_HAS(live, "expected SelectType=select/duet, got select/cons_tres");
  in.pending = EnableMode::site_factor;
  CheckResult r = check_duet_setup(in);
  ck_assert_msg(r.problems.empty(), "%s", all(r).c_str());
  ck_assert_msg(r.summary.find("defaults.conf (as duet-admin enable --mode site-factor will write it): "
                               "priority/multifactor + site_factor/duet, select/duet") != std::string::npos,
                "%s", r.summary.c_str());
  in.pending = EnableMode::priority;
  r = check_duet_setup(in);
  ck_assert_msg(r.problems.empty(), "%s", all(r).c_str());
  ck_assert_msg(r.summary.find("will write it): priority/duet, select/duet") != std::string::npos, "%s",
                r.summary.c_str());

  // a weight kept as it is: checked
  write("weight.conf", defaults + "PrioritySiteFactorParameters=weight=lots\n");
  in.slurm_conf = g_dir + "/weight.conf";
  in.pending = EnableMode::site_factor;
  r = check_duet_setup(in);
  CK_HAS(r, g_dir + "/weight.conf:8: PrioritySiteFactorParameters");

  // a key enable would have to edit in an Included file
  write("sel.conf", "SelectType=select/cons_tres\n");
  write("inc.conf", "ClusterName=t\nSlurmUser=" + me() +
                        "\nPriorityType=priority/multifactor\nInclude sel.conf\nSelectTypeParameters=CR_Core\n"
                        "GresTypes=gpu\n");
  in.slurm_conf = g_dir + "/inc.conf";
  r = check_duet_setup(in);
  ck_assert_int_eq(r.problems.size(), 1);
  CK_HAS(r, g_dir + "/sel.conf:1: SelectType is set here, Included by " + g_dir + "/inc.conf: duet-admin edits " +
                g_dir + "/inc.conf only");
}
END_TEST

START_TEST(test_preemption_warnings) {
  write("p.conf", std::string(kGoodConf) + "Preemption=requeue\nPreemptMinRunTime=60\n");
  CheckResult r = check("p.conf", "slurm.conf");
  ck_assert_msg(r.problems.empty() && r.warnings.empty(), "%s%s", all(r).c_str(), warnings(r).c_str());
  ck_assert_msg(r.summary.find("preempting by requeue") != std::string::npos, "%s", r.summary.c_str());

  const char* build = std::getenv("top_builddir");
  const std::string init =
      std::string(build ? build : ".") + "/duet model init --seed 1 --out '" + g_dir + "/plain.model' >/dev/null";
  ck_assert_msg(std::system(init.c_str()) == 0, "%s (set top_builddir)", init.c_str());
  chmod((g_dir + "/plain.model").c_str(), 0644);
  write("n.conf",
        "Scorer=model\nModelPath=plain.model\nRanker=model\nPlacementModelPath=duet.model\n"
        "Preemption=requeue\n");
  r = check("n.conf", "slurm.conf");
  ck_assert_msg(r.problems.empty(), "%s", all(r).c_str());
  ck_assert_uint_eq(r.warnings.size(), 1);
  const std::string w = warnings(r);
  ck_assert_msg(w.find(g_dir + "/n.conf:5: Preemption=requeue but the model " + g_dir +
                       "/plain.model is not preemptive (duet model init --preemptive, duet train --preemptive): "
                       "nothing is preempted") == 0,
                "%s", w.c_str());
  ck_assert_msg(r.summary.find("preempting") == std::string::npos, "%s", r.summary.c_str());

  write("s.conf", "Scorer=small-first\nRanker=none\nPreemption=requeue\n");
  write("preempt-slurm.conf", good_slurm_conf() + "PreemptType=preempt/qos\nPreemptMode=REQUEUE\n");
  r = check("s.conf", "preempt-slurm.conf");
  ck_assert_msg(r.problems.empty(), "%s", all(r).c_str());
  ck_assert_uint_eq(r.warnings.size(), 2);
  ck_assert_msg(warnings(r).find(g_dir + "/s.conf:3: Preemption=requeue with Scorer=small-first, which is not "
                                         "preemptive: nothing is preempted\n") == 0,
                "%s", warnings(r).c_str());
  ck_assert_msg(
      warnings(r).find(g_dir + "/preempt-slurm.conf:10: PreemptType=preempt/qos preempts too") != std::string::npos,
      "%s", warnings(r).c_str());

  // off (the default): nothing to warn about, Slurm's preemption is its own business
  r = check("duet.conf", "preempt-slurm.conf");
  ck_assert_msg(r.problems.empty() && r.warnings.empty(), "%s%s", all(r).c_str(), warnings(r).c_str());

  write("bad.conf", std::string(kGoodConf) + "Preemption=suspend\nPreemptMaxPerRescore=0\n");
  r = check("bad.conf", "slurm.conf");
  ck_assert_uint_eq(r.problems.size(), 2);
  CK_HAS(r, g_dir + "/bad.conf:5: Preemption: expected one of off | requeue, got 'suspend' (default kept)");
  CK_HAS(r, g_dir + "/bad.conf:6: PreemptMaxPerRescore: expected an integer 1..1000, got '0' (default kept)");
  ck_assert(r.warnings.empty());
}
END_TEST

int main() {
  duet::plugin::register_ordering_agent();  // as duet check-config does
  duet::plugin::register_placement_agent();
  Suite* s = suite_create("check_config");
  TCase* tc = tcase_create("check");
  tcase_set_timeout(tc, 60);  // Check's default, 4 s, fails on a loaded host
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, test_good_setup_passes);
  tcase_add_test(tc, test_bad_keys_name_file_and_line);
  tcase_add_test(tc, test_missing_conf_given_is_a_problem);
  tcase_add_test(tc, test_missing_model_names_its_key_line);
  tcase_add_test(tc, test_not_a_model_is_refused);
  tcase_add_test(tc, test_world_writable_model_is_refused);
  tcase_add_test(tc, test_world_writable_conf_is_refused);
  tcase_add_test(tc, test_missing_speeds_file_is_named);
  tcase_add_test(tc, test_bad_job_type_speeds_file_is_named);
  tcase_add_test(tc, test_prefer_fast_needs_speeds);
  tcase_add_test(tc, test_slurm_conf_missing_select_line);
  tcase_add_test(tc, test_slurm_conf_wrong_lines);
  tcase_add_test(tc, test_slurm_conf_priority_duet_and_include);
  tcase_add_test(tc, test_preemption_warnings);
  tcase_add_test(tc, test_pending_checks_the_lines_enable_writes);
  suite_add_tcase(s, tc);
  return test_support::run_suite(s);
}
