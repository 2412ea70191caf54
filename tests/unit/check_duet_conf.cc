// duet.conf parser: defaults, every key, errors with file:line:column.
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include "plugins/seam/duet_conf.h"
#include "plugins/seam/file_text.h"
#include "tests/unit/in_child.h"
#include "tests/unit/test_data.h"

#include <check.h>  // last: it defines a fail() macro
#include "tests/unit/run_suite.h"

using duet::plugin::ConfResult;
using duet::plugin::load_duet_conf;
using duet::plugin::LogLevel;
using duet::plugin::parse_duet_conf;

START_TEST(test_defaults) {
  ConfResult r = parse_duet_conf("", "/etc/slurm/duet.conf");
  ck_assert_int_eq(r.errors.size(), 0);
  ck_assert_str_eq(r.conf.scorer.c_str(), "model");
  ck_assert_str_eq(r.conf.model_path.c_str(), "/etc/slurm/duet-ordering.model");
  ck_assert_str_eq(r.conf.placement_model_path.c_str(), "/etc/slurm/duet-placement.model");
  ck_assert_int_eq(r.conf.rescore_interval_s, 5);
  ck_assert(r.conf.fallback_age_weight == 1000);
  ck_assert(r.conf.fallback_size_weight == 1000);
  ck_assert_int_eq(r.conf.fallback_max_age_s, 7 * 86400);
  ck_assert_str_eq(r.conf.preemption.c_str(), "off");
  ck_assert_int_eq(r.conf.preempt_min_run_time_s, 600);
  ck_assert_int_eq(r.conf.preempt_job_interval_s, 3600);
  ck_assert_int_eq(r.conf.preempt_max_restarts, 3);
  ck_assert_int_eq(r.conf.preempt_max_per_rescore, 4);
  ck_assert_str_eq(r.conf.ranker.c_str(), "model");
  ck_assert_str_eq(r.conf.observer.c_str(), "node-stats");
  ck_assert(r.conf.explain);
  ck_assert(r.conf.log_level == LogLevel::kInfo);
}
END_TEST

START_TEST(test_all_keys) {
  ConfResult r = parse_duet_conf(
      "# comment\n"
      "Scorer=small-first\n"
      "  modelpath = models/order.pt   # trailing comment\n"
      "RescoreInterval=2\n"
      "FallbackAgeWeight=10.5\n"
      "FallbackSizeWeight=0\n"
      "FallbackMaxAge=3600\n"
      "Preemption=Requeue\n"
      "PreemptMinRunTime=0\n"
      "PreemptJobInterval=7200\n"
      "PreemptMaxRestarts=1\n"
      "PreemptMaxPerRescore=1000\n"
      "Ranker=prefer-fast\n"
      "PlacementModelPath=/abs/place.bin\n"
      "NodeSpeedsFile=../nodes.csv\n"
      "Observer=none\n"
      "Explain=no\n"
      "LogLevel=Debug\n",
      "/c/etc/duet.conf");
  for (auto& e : r.errors) std::fprintf(stderr, "%s\n", e.text().c_str());
  ck_assert_int_eq(r.errors.size(), 0);
  ck_assert_str_eq(r.conf.scorer.c_str(), "small-first");
  ck_assert_str_eq(r.conf.model_path.c_str(), "/c/etc/models/order.pt");
  ck_assert_int_eq(r.conf.rescore_interval_s, 2);
  ck_assert(r.conf.fallback_age_weight == 10.5);
  ck_assert(r.conf.fallback_size_weight == 0);
  ck_assert_int_eq(r.conf.fallback_max_age_s, 3600);
  ck_assert_str_eq(r.conf.preemption.c_str(), "requeue");
  ck_assert_int_eq(r.conf.preempt_min_run_time_s, 0);
  ck_assert_int_eq(r.conf.preempt_job_interval_s, 7200);
  ck_assert_int_eq(r.conf.preempt_max_restarts, 1);
  ck_assert_int_eq(r.conf.preempt_max_per_rescore, 1000);
  ck_assert_str_eq(r.conf.ranker.c_str(), "prefer-fast");
  ck_assert_str_eq(r.conf.placement_model_path.c_str(), "/abs/place.bin");
  ck_assert_str_eq(r.conf.node_speeds_file.c_str(), "/c/etc/../nodes.csv");
  ck_assert_str_eq(r.conf.observer.c_str(), "none");
  ck_assert(!r.conf.explain);
  ck_assert(r.conf.log_level == LogLevel::kDebug);
}
END_TEST

START_TEST(test_unknown_key_has_file_line_column) {
  ConfResult r = parse_duet_conf("Scorer=fallback\n\n   Bogus=1\n", "/x/duet.conf");
  ck_assert_int_eq(r.errors.size(), 1);
  ck_assert_int_eq(r.errors[0].line, 3);
  ck_assert_int_eq(r.errors[0].column, 4);
  std::string t = r.errors[0].text();
  ck_assert_msg(t.rfind("/x/duet.conf:3:4: unknown key 'Bogus'", 0) == 0, "%s", t.c_str());
  ck_assert_msg(t.find("RescoreInterval") != std::string::npos, "lists known keys: %s", t.c_str());
  ck_assert_str_eq(r.conf.scorer.c_str(), "fallback");  // good lines still count
}
END_TEST

START_TEST(test_bad_values_keep_defaults) {
  ConfResult r = parse_duet_conf(
      "RescoreInterval=0\n"
      "RescoreInterval=abc\n"
      "FallbackAgeWeight=-1\n"
      "Scorer=magic\n"
      "Explain=maybe\n"
      "LogLevel=loud\n"
      "NodeSpeedsFile=\n"
      "no equals sign here\n",
      "d.conf");
  ck_assert_int_eq(r.errors.size(), 8 + 1);  // + RescoreInterval given twice
  ck_assert_int_eq(r.conf.rescore_interval_s, 5);
  ck_assert(r.conf.fallback_age_weight == 1000);
  ck_assert_str_eq(r.conf.scorer.c_str(), "model");
  ck_assert(r.conf.explain);
  bool saw_range = false, saw_choice = false, saw_kv = false;
  for (auto& e : r.errors) {
    std::string t = e.text();
    if (t.rfind("d.conf:1:17: RescoreInterval: expected an integer 1..3600, got '0'", 0) == 0) saw_range = true;
    if (t.find("d.conf:4:8: Scorer: expected one of model | small-first | fallback, got 'magic'") == 0)
      saw_choice = true;
    if (t.find("d.conf:8:1: expected Key=Value") == 0) saw_kv = true;
  }
  ck_assert(saw_range);
  ck_assert(saw_choice);
  ck_assert(saw_kv);
}
END_TEST

START_TEST(test_bad_preemption_values_keep_defaults) {
  ConfResult r = parse_duet_conf(
      "Preemption=suspend\n"
      "PreemptMinRunTime=-1\n"
      "PreemptJobInterval=604801\n"
      "PreemptMaxRestarts=0\n"
      "PreemptMaxPerRescore=0\n",
      "p.conf");
  ck_assert_int_eq(r.errors.size(), 5);
  ck_assert_str_eq(r.conf.preemption.c_str(), "off");
  ck_assert_int_eq(r.conf.preempt_min_run_time_s, 600);
  ck_assert_int_eq(r.conf.preempt_job_interval_s, 3600);
  ck_assert_int_eq(r.conf.preempt_max_restarts, 3);
  ck_assert_int_eq(r.conf.preempt_max_per_rescore, 4);
  const std::string t = r.errors[0].text();
  ck_assert_msg(t == "p.conf:1:12: Preemption: expected one of off | requeue, got 'suspend' (default kept)", "%s",
                t.c_str());
  const std::string t4 = r.errors[4].text();
  ck_assert_str_eq(t4.c_str(),
                   "p.conf:5:22: PreemptMaxPerRescore: expected an integer 1..1000, got '0' (default kept)");
}
END_TEST

START_TEST(test_load_missing_and_real_file) {
  ConfResult missing = load_duet_conf("/nonexistent-dir/duet.conf");
  ck_assert(!missing.file_found);
  ck_assert_int_eq(missing.errors.size(), 0);
  ck_assert_str_eq(missing.conf.model_path.c_str(), "/nonexistent-dir/duet-ordering.model");

  char dir[] = "/tmp/check_duet_conf.XXXXXX";
  ck_assert_ptr_nonnull(mkdtemp(dir));
  std::string path = std::string(dir) + "/duet.conf";
  std::ofstream(path) << "RescoreInterval=7\nLogLevel=quiet\nWrong=1\n";
  ConfResult r = load_duet_conf(path);
  ck_assert(r.file_found);
  ck_assert_int_eq(r.conf.rescore_interval_s, 7);
  ck_assert(r.conf.log_level == LogLevel::kQuiet);
  ck_assert_int_eq(r.errors.size(), 1);
  ck_assert_int_eq(r.errors[0].line, 3);
  ck_assert_str_eq(r.errors[0].file.c_str(), path.c_str());
  unlink(path.c_str());
  rmdir(dir);
}
END_TEST

START_TEST(test_conf_path_next_to_slurm_conf) {
  std::string a = duet::plugin::duet_conf_path_for("/etc/slurm/slurm.conf");
  std::string b = duet::plugin::duet_conf_path_for("slurm.conf");
  ck_assert_str_eq(a.c_str(), "/etc/slurm/duet.conf");
  ck_assert_str_eq(b.c_str(), "./duet.conf");
}
END_TEST

// The shipped example parses cleanly and states the real defaults.
START_TEST(test_example_file_is_the_defaults_but_the_model) {
  std::string path = test_support::source_path("etc/duet.conf.example");
  ConfResult r = load_duet_conf(path);
  ck_assert_msg(r.file_found, "%s not found (set top_srcdir)", path.c_str());
  for (auto& e : r.errors) std::fprintf(stderr, "%s\n", e.text().c_str());
  ck_assert_int_eq(r.errors.size(), 0);
  ConfResult d = parse_duet_conf("", path);
  ck_assert_str_eq(r.conf.scorer.c_str(), d.conf.scorer.c_str());
  // but for the model paths: both agents from the shipped model, copied next to it
  const std::string shipped = duet::plugin::dir_of(path) + "/duet.model";
  ck_assert_str_eq(r.conf.model_path.c_str(), shipped.c_str());
  ck_assert_str_eq(r.conf.placement_model_path.c_str(), shipped.c_str());
  ck_assert_int_eq(r.conf.rescore_interval_s, d.conf.rescore_interval_s);
  ck_assert(r.conf.fallback_age_weight == d.conf.fallback_age_weight);
  ck_assert(r.conf.fallback_size_weight == d.conf.fallback_size_weight);
  ck_assert_int_eq(r.conf.fallback_max_age_s, d.conf.fallback_max_age_s);
  ck_assert_str_eq(r.conf.preemption.c_str(), d.conf.preemption.c_str());
  ck_assert_int_eq(r.conf.preempt_min_run_time_s, d.conf.preempt_min_run_time_s);
  ck_assert_int_eq(r.conf.preempt_job_interval_s, d.conf.preempt_job_interval_s);
  ck_assert_int_eq(r.conf.preempt_max_restarts, d.conf.preempt_max_restarts);
  ck_assert_int_eq(r.conf.preempt_max_per_rescore, d.conf.preempt_max_per_rescore);
  ck_assert_str_eq(r.conf.ranker.c_str(), d.conf.ranker.c_str());
  ck_assert_str_eq(r.conf.node_speeds_file.c_str(), d.conf.node_speeds_file.c_str());
  ck_assert_str_eq(r.conf.observer.c_str(), d.conf.observer.c_str());
  ck_assert(r.conf.explain == d.conf.explain);
  ck_assert(r.conf.log_level == d.conf.log_level);
}
END_TEST

// '#' is a comment only at the start of a line or after a space or tab: a
// path holding '#' was silently cut short.
START_TEST(test_hash_in_values) {
  ConfResult r = parse_duet_conf(
      "ModelPath=/srv/a#1/m.model\n"
      "PlacementModelPath=/srv/p.model # the placement model\n"
      "#Scorer=fallback\n"
      "   # Ranker=none\n"
      "NodeSpeedsFile=/srv/s.csv\t#tab before\n",
      "/etc/duet.conf");
  for (auto& e : r.errors) std::fprintf(stderr, "%s\n", e.text().c_str());
  ck_assert_int_eq(r.errors.size(), 0);
  ck_assert_str_eq(r.conf.model_path.c_str(), "/srv/a#1/m.model");
  ck_assert_str_eq(r.conf.placement_model_path.c_str(), "/srv/p.model");
  ck_assert_str_eq(r.conf.node_speeds_file.c_str(), "/srv/s.csv");
  ck_assert_str_eq(r.conf.scorer.c_str(), "model");
  ck_assert_str_eq(r.conf.ranker.c_str(), "model");
}
END_TEST

// Integers and weights are plain decimal; a NUL byte or another control
// character refuses the line (strtod took "5\0junk" as 5, and "0x10").
START_TEST(test_strict_values) {
  using namespace std::string_literals;
  const std::string text = std::string("FallbackAgeWeight=0x10\n") +  // 1
                           "FallbackSizeWeight=5\0junk\n"s +          // 2
                           "RescoreInterval=0x10\n" +                 // 3
                           "RescoreInterval=+7\n" +                   // 4
                           "FallbackMaxAge=010\n" +                   // 5: decimal 10
                           "ModelPath=/srv/a\0/evil\n"s +             // 6
                           "FallbackAgeWeight= 1e3\n" +               // 7: fine
                           "FallbackSizeWeight=inf\n";                // 8
  ConfResult r = parse_duet_conf(text, "d.conf");
  ck_assert(r.conf.fallback_age_weight == 1000);
  ck_assert(r.conf.fallback_size_weight == 1000);  // default kept
  ck_assert_int_eq(r.conf.rescore_interval_s, 5);
  ck_assert_int_eq(r.conf.fallback_max_age_s, 10);
  ck_assert_str_eq(r.conf.model_path.c_str(), "./duet-ordering.model");  // the default: line 6 ignored
  std::string all;
  for (auto& e : r.errors) all += e.text() + "\n";
  for (const char* want : {"d.conf:1:19: FallbackAgeWeight: expected a number 0..1000000, got '0x10'",
                           "d.conf:2:21: control character 0x00 in the line (line ignored)",
                           "d.conf:3:17: RescoreInterval: expected an integer 1..3600, got '0x10'",
                           "d.conf:4:17: RescoreInterval: expected an integer 1..3600, got '+7'",
                           "d.conf:6:17: control character 0x00 in the line (line ignored)",
                           "d.conf:8:20: FallbackSizeWeight: expected a number 0..1000000, got 'inf'"})
    ck_assert_msg(all.find(want) != std::string::npos, "'%s' not in:\n%s", want, all.c_str());
}
END_TEST

// Text from the file is escaped in messages (they go to slurmctld's log).
START_TEST(test_errors_escape_control_characters) {
  ConfResult r = parse_duet_conf("Scorer=\x1b[31mred\nRanker=caf\xc3\xa9\n", "e.conf");
  ck_assert_int_eq(r.errors.size(), 2);
  for (auto& e : r.errors) {
    std::string t = e.text();
    for (char ch : t)
      ck_assert_msg(static_cast<unsigned char>(ch) >= 0x20 && static_cast<unsigned char>(ch) < 0x7f, "%s", t.c_str());
  }
  const std::string t0 = r.errors[0].text();
  ck_assert_str_eq(t0.c_str(), "e.conf:1:8: control character 0x1b in the line (line ignored)");
  ck_assert_msg(r.errors[1].text().find("got 'caf\\xc3\\xa9'") != std::string::npos, "%s", r.errors[1].text().c_str());
}
END_TEST

// load_duet_conf in a child with a 10 s deadline: a FIFO blocked std::ifstream.
static std::string load_errors_in_child(const std::string& path) {
  return test_support::in_child([&] {
    std::string out;
    for (auto& e : load_duet_conf(path).errors) out += e.text() + "\n";
    return out;
  });
}

// Not a regular file, or larger than 1 MiB: refused at once, all defaults.
START_TEST(test_load_refuses_special_and_huge_files) {
  char dir[] = "/tmp/check_duet_conf.XXXXXX";
  ck_assert_ptr_nonnull(mkdtemp(dir));
  const std::string fifo = std::string(dir) + "/duet.conf";
  ck_assert_int_eq(mkfifo(fifo.c_str(), 0600), 0);
  std::string got = load_errors_in_child(fifo);
  const std::string want = fifo + ":0:0: is a FIFO, expected a regular file (duet.conf) (all defaults)\n";
  ck_assert_str_eq(got.c_str(), want.c_str());
  unlink(fifo.c_str());
  const std::string big = std::string(dir) + "/big.conf";
  int fd = open(big.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  ck_assert_int_ge(fd, 0);
  ck_assert_int_eq(ftruncate(fd, 2 << 20), 0);
  close(fd);
  got = load_errors_in_child(big);
  ck_assert_msg(
      got.find("big.conf:0:0: 2097152 bytes, more than the 1048576 bytes a duet.conf may have") != std::string::npos,
      "%s", got.c_str());
  unlink(big.c_str());
  rmdir(dir);
}
END_TEST

// With SlurmUser's uid, a duet.conf others could change is refused in one
// line and all defaults apply (its keys would steer the scheduler).
START_TEST(test_load_refuses_untrusted_file) {
  char dir[] = "/tmp/check_duet_conf.XXXXXX";
  ck_assert_ptr_nonnull(mkdtemp(dir));
  const std::string path = std::string(dir) + "/duet.conf";
  std::ofstream(path) << "Scorer=small-first\n";
  const uint32_t me = static_cast<uint32_t>(geteuid());
  ck_assert_int_eq(chmod(path.c_str(), 0644), 0);
  ConfResult ok = load_duet_conf(path, me);
  ck_assert_int_eq(ok.errors.size(), 0);
  ck_assert_str_eq(ok.conf.scorer.c_str(), "small-first");
  ck_assert(ok.conf.trusted_uid && *ok.conf.trusted_uid == me);
  ck_assert_int_eq(chmod(path.c_str(), 0666), 0);
  ConfResult r = load_duet_conf(path, me);
  ck_assert(r.file_found);
  ck_assert_str_eq(r.conf.scorer.c_str(), "model");  // defaults
  ck_assert(r.conf.trusted_uid && *r.conf.trusted_uid == me);
  ck_assert_int_eq(r.errors.size(), 1);
  const std::string want = path +
                           ":0:0: refused: the file is writable by others (mode 0666); only root and SlurmUser (uid " +
                           std::to_string(me) + ") may be able to change it (all defaults)";
  const std::string got = r.errors[0].text();
  ck_assert_str_eq(got.c_str(), want.c_str());
  // without the uid (tools), no ownership check
  ck_assert_str_eq(load_duet_conf(path).conf.scorer.c_str(), "small-first");
  unlink(path.c_str());
  rmdir(dir);
}
END_TEST

int main() {
  Suite* s = suite_create("duet_conf");
  TCase* tc = tcase_create("parse");
  tcase_set_timeout(tc, 30);  // the special-file test waits up to 10 s for a child
  tcase_add_test(tc, test_defaults);
  tcase_add_test(tc, test_all_keys);
  tcase_add_test(tc, test_unknown_key_has_file_line_column);
  tcase_add_test(tc, test_bad_values_keep_defaults);
  tcase_add_test(tc, test_bad_preemption_values_keep_defaults);
  tcase_add_test(tc, test_load_missing_and_real_file);
  tcase_add_test(tc, test_conf_path_next_to_slurm_conf);
  tcase_add_test(tc, test_example_file_is_the_defaults_but_the_model);
  tcase_add_test(tc, test_hash_in_values);
  tcase_add_test(tc, test_strict_values);
  tcase_add_test(tc, test_errors_escape_control_characters);
  tcase_add_test(tc, test_load_refuses_special_and_huge_files);
  tcase_add_test(tc, test_load_refuses_untrusted_file);
  suite_add_tcase(s, tc);
  return test_support::run_suite(s);
}
