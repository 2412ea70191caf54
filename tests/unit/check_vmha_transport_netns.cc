// Replication over UCX's TCP transport between two network namespaces that the
// test creates (its own two "hosts" joined by a veth pair, 10.200.0.0/30 inside
// them only), plus an unauthenticated peer over the same link. Needs root and
// `ip netns`; skips (77) otherwise. The namespaces are removed at the end.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "tests/vmha_repl/harness.h"
#include "tests/unit/skip.h"

// Check defines macros (fail, ...) that clash with C++ headers: include it last.
#include <check.h>

using vmha::test::describe;
using vmha::test::Fault;
using vmha::test::HarnessConfig;
using vmha::test::HarnessResult;
using vmha::test::run_harness;

namespace {

std::string g_backup_ns, g_primary_ns;

bool sh(const std::string& cmd) {
  std::string quiet = cmd + " >/dev/null 2>&1";
  return std::system(quiet.c_str()) == 0;
}

void remove_namespaces() {
  if (!g_backup_ns.empty()) sh("ip netns del " + g_backup_ns);
  if (!g_primary_ns.empty()) sh("ip netns del " + g_primary_ns);
}

// Two namespaces joined by a veth pair: backup 10.200.0.1, primary 10.200.0.2.
std::string make_namespaces() {
  std::string id = std::to_string(::getpid());
  g_backup_ns = "vmha-b-" + id;
  g_primary_ns = "vmha-p-" + id;
  std::string vb = "vmhab" + id, vp = "vmhap" + id;  // <= 15 characters
  if (!sh("ip netns add " + g_backup_ns)) {
    g_backup_ns.clear();
    return "cannot create a network namespace (ip netns add)";
  }
  if (!sh("ip netns add " + g_primary_ns)) {
    g_primary_ns.clear();
    return "cannot create a second network namespace";
  }
  const char* steps[] = {"ip link add {vb} netns {B} type veth peer name {vp} netns {P}",
                         "ip -n {B} addr add 10.200.0.1/30 dev {vb}",
                         "ip -n {P} addr add 10.200.0.2/30 dev {vp}",
                         "ip -n {B} link set {vb} up",
                         "ip -n {P} link set {vp} up",
                         "ip -n {B} link set lo up",
                         "ip -n {P} link set lo up"};
  for (std::string cmd : steps) {
    for (auto [key, val] :
         {std::pair<std::string, std::string>{"{vb}", vb}, {"{vp}", vp}, {"{B}", g_backup_ns}, {"{P}", g_primary_ns}}) {
      for (auto pos = cmd.find(key); pos != std::string::npos; pos = cmd.find(key)) cmd.replace(pos, key.size(), val);
    }
    if (!sh(cmd)) return "network set-up failed: " + cmd;
  }
  // UCX skips interfaces that are not running yet: wait for the carrier.
  for (int i = 0; i < 50; ++i) {
    if (sh("ip -n " + g_backup_ns + " link show " + vb + " | grep -q LOWER_UP") &&
        sh("ip -n " + g_primary_ns + " link show " + vp + " | grep -q LOWER_UP"))
      return "";
    ::usleep(100000);
  }
  return "veth link did not come up within 5 s";
}

HarnessConfig tcp_config() {
  HarnessConfig cfg;
  cfg.transports = "tcp";
  cfg.listen = "10.200.0.1:0";
  cfg.backup_netns = g_backup_ns;
  cfg.primary_netns = g_primary_ns;
  cfg.pages = 1024;
  cfg.epochs = 4;
  cfg.writer_pause_every = 1;
  return cfg;
}

}  // namespace

START_TEST(replicates_between_namespaces_over_tcp) {
  HarnessResult r = run_harness(tcp_config());
  std::fprintf(stderr, "tcp between namespaces: %s\n", describe(r).c_str());
  ck_assert_msg(r.backup_error.empty(), "backup error: %s", r.backup_error.c_str());
  ck_assert_msg(r.primary_error.empty(), "primary error: %s", r.primary_error.c_str());
  ck_assert_int_eq(r.commits, 4);
  ck_assert_int_eq(r.crc_mismatches, 0);
  ck_assert_msg(r.compared_snapshot && r.snapshot_matches, "final image differs from the primary's memory");
}
END_TEST

START_TEST(wrong_key_refused_between_namespaces) {
  HarnessConfig cfg = tcp_config();
  cfg.fault = Fault::kWrongKey;
  HarnessResult r = run_harness(cfg);
  std::fprintf(stderr, "wrong key between namespaces: %s\n", describe(r).c_str());
  ck_assert_msg(r.primary_error.find("did not prove it holds the job's secret") != std::string::npos, "primary: %s",
                r.primary_error.c_str());
  ck_assert_int_eq(r.commits, 0);
}
END_TEST

int main() {
  if (!test_support::is_root()) {
    std::printf("SKIP: creating network namespaces needs root\n");
    return 77;
  }
  std::string why = make_namespaces();
  if (!why.empty()) {
    remove_namespaces();
    std::printf("SKIP: %s\n", why.c_str());
    return 77;
  }
  Suite* s = suite_create("vmha_transport_netns");
  TCase* tc = tcase_create("tcp");
  tcase_set_timeout(tc, 90);
  tcase_add_test(tc, replicates_between_namespaces_over_tcp);
  tcase_add_test(tc, wrong_key_refused_between_namespaces);
  suite_add_tcase(s, tc);
  SRunner* sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  remove_namespaces();
  return failed == 0 ? 0 : 1;
}
