// Replication over UCX between two processes on one host: the backup's
// committed image equals the primary's memory at every epoch end while a
// writer keeps dirtying it; corrupted, truncated, miscounted checkpoints and
// unauthenticated peers are refused and leave the committed image untouched;
// a killed primary is declared lost only after the lease.

#include <cstdio>
#include <string>

#include "tests/vmha_repl/harness.h"

// Check defines macros (fail, ...) that clash with C++ headers: include it last.
#include <check.h>

using vmha::test::describe;
using vmha::test::Fault;
using vmha::test::HarnessConfig;
using vmha::test::HarnessResult;
using vmha::test::run_harness;

namespace {

HarnessResult run(HarnessConfig cfg, const char* name) {
  HarnessResult r = run_harness(cfg);
  std::fprintf(stderr, "%s: %s\n", name, describe(r).c_str());
  return r;
}

bool contains(const std::string& s, const char* what) { return s.find(what) != std::string::npos; }

void check_clean_run(const HarnessResult& r, int epochs) {
  ck_assert_msg(r.backup_error.empty(), "backup error: %s", r.backup_error.c_str());
  ck_assert_msg(r.primary_error.empty(), "primary error: %s", r.primary_error.c_str());
  ck_assert_int_eq(r.commits, epochs);
  ck_assert_int_eq(r.committed_epoch, epochs);
  ck_assert_int_eq(r.crc_mismatches, 0);
  ck_assert_msg(r.compared_snapshot && r.snapshot_matches, "final image differs from the primary's memory");
  ck_assert_msg(r.residual_pages > 0, "no residual pages: the writer did not run");
}

}  // namespace

START_TEST(replicates_while_writing_shared_memory) {
  HarnessConfig cfg;  // UCX default transports: sm (posix/sysv) on one host
  cfg.epochs = 6;
  HarnessResult r = run(cfg, "default transports");
  check_clean_run(r, cfg.epochs);
  // The point of prefetch: most pages were pulled while the guest ran.
  ck_assert_msg(r.prefetched_pages > r.residual_pages, "prefetched %llu <= residual %llu",
                (unsigned long long)r.prefetched_pages, (unsigned long long)r.residual_pages);
}
END_TEST

START_TEST(replicates_while_writing_tcp_loopback) {
  HarnessConfig cfg;
  cfg.transports = "tcp";
  cfg.pages = 1024;
  cfg.epochs = 4;
  cfg.writer_pause_every = 1;
  HarnessResult r = run(cfg, "tcp");
  check_clean_run(r, cfg.epochs);
}
END_TEST

START_TEST(wrong_key_is_refused_before_memory_is_exposed) {
  HarnessConfig cfg;
  cfg.fault = Fault::kWrongKey;
  HarnessResult r = run(cfg, "wrong key");
  // Keys differ: the primary finds the backup's proof wrong first and stops.
  ck_assert_msg(contains(r.backup_error, "same secret"), "backup: %s", r.backup_error.c_str());
  ck_assert_msg(contains(r.primary_error, "did not prove it holds the job's secret"), "primary: %s",
                r.primary_error.c_str());
  ck_assert_int_eq(r.commits, 0);
  ck_assert_int_eq(r.prefetched_pages + r.residual_pages, 0);
}
END_TEST

START_TEST(other_method_is_refused) {
  HarnessConfig cfg;
  cfg.fault = Fault::kWrongMethod;
  HarnessResult r = run(cfg, "other method");
  ck_assert_msg(contains(r.backup_error, "not accepted"), "backup: %s", r.backup_error.c_str());
  ck_assert_msg(contains(r.primary_error, "not accepted"), "primary: %s", r.primary_error.c_str());
  ck_assert_int_eq(r.commits, 0);
}
END_TEST

START_TEST(corrupted_frame_is_rejected_image_untouched) {
  HarnessConfig cfg;
  cfg.fault = Fault::kCorruptFrame;
  HarnessResult r = run(cfg, "corrupted frame");
  ck_assert_msg(contains(r.backup_error, "payload checksum mismatch"), "backup: %s", r.backup_error.c_str());
  ck_assert_int_eq(r.committed_epoch, 1);
  ck_assert_msg(r.compared_snapshot && r.snapshot_matches, "image changed after a rejected checkpoint");
}
END_TEST

START_TEST(truncated_frame_is_rejected_image_untouched) {
  HarnessConfig cfg;
  cfg.fault = Fault::kTruncatedFrame;
  HarnessResult r = run(cfg, "truncated frame");
  ck_assert_msg(contains(r.backup_error, "truncated"), "backup: %s", r.backup_error.c_str());
  ck_assert_int_eq(r.committed_epoch, 1);
  ck_assert_msg(r.compared_snapshot && r.snapshot_matches, "image changed after a rejected checkpoint");
}
END_TEST

START_TEST(miscounted_checkpoint_is_refused_image_untouched) {
  HarnessConfig cfg;
  cfg.fault = Fault::kBadCounts;
  cfg.epochs = 3;
  HarnessResult r = run(cfg, "bad counts");
  ck_assert_msg(contains(r.backup_error, "distinct pages"), "backup: %s", r.backup_error.c_str());
  ck_assert_msg(contains(r.primary_error, "refused checkpoint 2"), "primary: %s", r.primary_error.c_str());
  ck_assert_int_eq(r.committed_epoch, 1);
}
END_TEST

START_TEST(killed_primary_is_lost_only_after_lease) {
  HarnessConfig cfg;
  cfg.fault = Fault::kKillPrimary;
  HarnessResult r = run(cfg, "killed primary");
  ck_assert_msg(contains(r.backup_error, "lost"), "backup: %s", r.backup_error.c_str());
  ck_assert_int_eq(r.committed_epoch, 1);
  ck_assert(r.lease_held_before_expiry);
  ck_assert(r.lease_lost_after_expiry);
}
END_TEST

int main() {
  Suite* s = suite_create("vmha_transport");
  TCase* tc = tcase_create("ucx");
  tcase_set_timeout(tc, 90);
  tcase_add_test(tc, replicates_while_writing_shared_memory);
  tcase_add_test(tc, replicates_while_writing_tcp_loopback);
  tcase_add_test(tc, wrong_key_is_refused_before_memory_is_exposed);
  tcase_add_test(tc, other_method_is_refused);
  tcase_add_test(tc, corrupted_frame_is_rejected_image_untouched);
  tcase_add_test(tc, truncated_frame_is_rejected_image_untouched);
  tcase_add_test(tc, miscounted_checkpoint_is_refused_image_untouched);
  tcase_add_test(tc, killed_primary_is_lost_only_after_lease);
  suite_add_tcase(s, tc);
  SRunner* sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed == 0 ? 0 : 1;
}
