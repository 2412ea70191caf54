// duet.conf parser: defaults, every key, errors with file:line:column.
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <unistd.h>

#include "plugins/common/duet_conf.h"

#include <check.h>  // last: it defines a fail() macro

using duet::plugin::ConfResult;
using duet::plugin::LogLevel;
using duet::plugin::load_duet_conf;
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
    if (t.find("d.conf:4:8: Scorer: expected one of model | small-first | fallback, got 'magic'") == 0) saw_choice = true;
    if (t.find("d.conf:8:1: expected Key=Value") == 0) saw_kv = true;
  }
  ck_assert(saw_range);
  ck_assert(saw_choice);
  ck_assert(saw_kv);
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
START_TEST(test_example_file_is_the_defaults) {
  const char* src = std::getenv("top_srcdir");
  std::string path = std::string(src ? src : ".") + "/etc/duet.conf.example";
  ConfResult r = load_duet_conf(path);
  ck_assert_msg(r.file_found, "%s not found (set top_srcdir)", path.c_str());
  for (auto& e : r.errors) std::fprintf(stderr, "%s\n", e.text().c_str());
  ck_assert_int_eq(r.errors.size(), 0);
  ConfResult d = parse_duet_conf("", path);
  ck_assert_str_eq(r.conf.scorer.c_str(), d.conf.scorer.c_str());
  ck_assert_str_eq(r.conf.model_path.c_str(), d.conf.model_path.c_str());
  ck_assert_str_eq(r.conf.placement_model_path.c_str(), d.conf.placement_model_path.c_str());
  ck_assert_int_eq(r.conf.rescore_interval_s, d.conf.rescore_interval_s);
  ck_assert(r.conf.fallback_age_weight == d.conf.fallback_age_weight);
  ck_assert(r.conf.fallback_size_weight == d.conf.fallback_size_weight);
  ck_assert_int_eq(r.conf.fallback_max_age_s, d.conf.fallback_max_age_s);
  ck_assert_str_eq(r.conf.ranker.c_str(), d.conf.ranker.c_str());
  ck_assert_str_eq(r.conf.node_speeds_file.c_str(), d.conf.node_speeds_file.c_str());
  ck_assert_str_eq(r.conf.observer.c_str(), d.conf.observer.c_str());
  ck_assert(r.conf.explain == d.conf.explain);
  ck_assert(r.conf.log_level == d.conf.log_level);
}
END_TEST

int main() {
  Suite* s = suite_create("duet_conf");
  TCase* tc = tcase_create("parse");
  tcase_add_test(tc, test_defaults);
  tcase_add_test(tc, test_all_keys);
  tcase_add_test(tc, test_unknown_key_has_file_line_column);
  tcase_add_test(tc, test_bad_values_keep_defaults);
  tcase_add_test(tc, test_load_missing_and_real_file);
  tcase_add_test(tc, test_conf_path_next_to_slurm_conf);
  tcase_add_test(tc, test_example_file_is_the_defaults);
  suite_add_tcase(s, tc);
  SRunner* sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
