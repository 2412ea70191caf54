// Every workload's output inside vmha equals its native output (stdout and
// exit status), and a snapshot → restore into a fresh VM in the middle of the
// run (at half its system calls, and for compute loops at a timer from
// another thread) gives the same final output and checksum.
#include <string>
#include <vector>

#include "tests/vmha/vmha_test_util.h"
#include "vmha/common/run_stats.h"

#include <check.h>
#include "tests/unit/run_suite.h"

namespace {

std::string g_dir;  // working directory with the generated input data

struct Workload {
  const char* name;
  std::vector<std::string> argv;  // argv[0] is a path
};

std::vector<Workload> workloads() {
  using vmha_test::workload;
  const std::string bb = "/bin/busybox";
  return {
      {"gzip", {bb, "gzip", "-c", "data.txt"}},
      {"bzip2", {bb, "bzip2", "-c", "data.txt"}},
      {"md5sum", {bb, "md5sum", "data.txt"}},
      {"sha256sum", {bb, "sha256sum", "data.txt"}},
      {"sort", {bb, "sort", "-t,", "-k2,2", "-k1n", "data.txt"}},
      {"awk",
       {bb, "awk", "-F,", "{n[$2]++; s[$2]+=$4} END {for (k in n) printf \"%s %d %d\\n\", k, n[k], s[k]}", "data.txt"}},
      {"stream", {workload("stream"), "300000", "4"}},
      {"hashtable", {workload("hashtable"), "262144", "600000"}},
      {"matmul", {workload("matmul"), "160"}},
      {"bfs", {workload("bfs"), "60000", "8"}},
      {"kvserver", {workload("kvserver"), "600"}},
  };
}

std::vector<std::string> in_vmha(const std::vector<std::string>& extra, const std::vector<std::string>& argv) {
  std::vector<std::string> v = {vmha_test::vmha_bin(), "run"};
  v.insert(v.end(), extra.begin(), extra.end());
  v.push_back("--");
  v.insert(v.end(), argv.begin(), argv.end());
  return v;
}

void prepare_data() {
  g_dir = vmha_test::make_temp_dir();
  vmha_test::Captured c = vmha_test::run_capture({vmha_test::workload("gendata"), "15000", "7"}, g_dir);
  if (c.exit_code() != 0) {
    std::fprintf(stderr, "gendata failed (%d): %s\n", c.exit_code(), c.err.c_str());
    std::exit(99);
  }
  FILE* f = std::fopen((g_dir + "/data.txt").c_str(), "w");
  std::fwrite(c.out.data(), 1, c.out.size(), f);
  std::fclose(f);
}

// The guest's system calls, from vmha's --stats-file (its stderr is for people).
uint64_t syscalls_of(const std::string& stats_file) {
  vmha::RunStats s;
  vmha::Status st = vmha::read_run_stats(stats_file, &s);
  ck_assert_msg(st.ok() && s.side == vmha::RunStats::Side::kLocal, "%s: %s", stats_file.c_str(), st.message().c_str());
  return s.syscalls;
}

START_TEST(output_equals_native) {
  const Workload w = workloads()[_i];
  vmha_test::Captured native = vmha_test::run_capture(w.argv, g_dir);
  ck_assert_msg(native.exit_code() == 0, "%s failed natively: %s", w.name, native.err.c_str());
  ck_assert_msg(!native.out.empty(), "%s printed nothing natively", w.name);
  vmha_test::Captured vm = vmha_test::run_capture(in_vmha({}, w.argv), g_dir);
  ck_assert_msg(vm.exit_code() == 0, "%s in vmha exited %d: %s", w.name, vm.exit_code(), vm.err.c_str());
  ck_assert_msg(vm.out == native.out, "%s: vmha output (%zu bytes) differs from native (%zu bytes)", w.name,
                vm.out.size(), native.out.size());
}
END_TEST

START_TEST(snapshot_restore_mid_run_equals_native) {
  const Workload w = workloads()[_i];
  vmha_test::Captured native = vmha_test::run_capture(w.argv, g_dir);
  const std::string stats = g_dir + "/vmha.stats";
  vmha_test::Captured plain = vmha_test::run_capture(in_vmha({"--stats-file", stats}, w.argv), g_dir);
  uint64_t n = syscalls_of(stats);
  ck_assert_msg(plain.exit_code() == 0 && n >= 4, "%s: %llu system calls (exit %d): %s", w.name,
                static_cast<unsigned long long>(n), plain.exit_code(), plain.err.c_str());
  std::string half = std::to_string(n / 2);
  vmha_test::Captured restored =
      vmha_test::run_capture(in_vmha({"--snapshot-at-syscall", half, "--restore"}, w.argv), g_dir);
  ck_assert_msg(restored.exit_code() == 0, "%s restored at syscall %s exited %d: %s", w.name, half.c_str(),
                restored.exit_code(), restored.err.c_str());
  ck_assert_msg(restored.err.find("before the snapshot point") == std::string::npos, "%s: no snapshot was taken",
                w.name);
  ck_assert_msg(restored.out == native.out, "%s: output after snapshot/restore at syscall %s differs from native",
                w.name, half.c_str());
}
END_TEST

START_TEST(timer_snapshot_keeps_fpu_state) {
  // Stopped from another thread in the middle of floating-point loops: the
  // SSE registers and MXCSR must come back exactly.
  std::vector<std::string> argv = {vmha_test::workload("stream"), "1000000", "30"};
  vmha_test::Captured native = vmha_test::run_capture(argv, g_dir);
  for (const char* ms : {"40", "120"}) {
    vmha_test::Captured r = vmha_test::run_capture(in_vmha({"--snapshot-after-ms", ms, "--restore"}, argv), g_dir);
    ck_assert_msg(r.exit_code() == 0, "stream restored after %s ms exited %d: %s", ms, r.exit_code(), r.err.c_str());
    ck_assert_msg(r.out == native.out, "stream restored after %s ms: %s instead of %s", ms, r.out.c_str(),
                  native.out.c_str());
  }
}
END_TEST

}  // namespace

int main() {
  vmha_test::require_kvm();
  vmha_test::require_busybox();
  prepare_data();
  int n = static_cast<int>(workloads().size());
  Suite* s = suite_create("vmha_workloads");
  TCase* tc = tcase_create("native");
  tcase_set_timeout(tc, 120);
  tcase_add_loop_test(tc, output_equals_native, 0, n);
  tcase_add_loop_test(tc, snapshot_restore_mid_run_equals_native, 0, n);
  tcase_add_test(tc, timer_snapshot_keeps_fpu_state);
  suite_add_tcase(s, tc);
  return test_support::run_suite(s);
}
