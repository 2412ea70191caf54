// The ordering plugins' memory of the jobs they preempted, as its state file
// keeps it across slurmctld restarts: the text (round trip, version 1 still
// read, every damage refused with a message saying what), the file (written
// whole, mode 0600; refused when others could have written it), and how a
// run's service is counted with it (a run already counted, as slurmctld's
// older job state shows it after a SIGKILL, is not counted twice).
#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>

#include "plugins/seam/preempt_state.h"
#include "plugins/seam/state_file.h"

#include <check.h>  // last: it defines a fail() macro
#include "tests/unit/ck_string.h"
#include "tests/unit/run_suite.h"

using namespace duet::plugin;


namespace {

EarlierServices sample() {
  EarlierServices s;
  s[41] = {620.5, 158848, 1, 1764681000};
  s[57] = {0.1, 1.0 / 3.0, 2, 0};  // not exact in decimal: must read back bit for bit
  s[4000000000u] = {0, 0, 1000, std::numeric_limits<int64_t>::max()};
  return s;
}

bool same(const EarlierServices& a, const EarlierServices& b) {
  if (a.size() != b.size()) return false;
  for (auto i = a.begin(), j = b.begin(); i != a.end(); ++i, ++j)
    if (i->first != j->first || i->second.run_s != j->second.run_s ||
        i->second.attained_gpu_s != j->second.attained_gpu_s || i->second.preemptions != j->second.preemptions ||
        i->second.last_start != j->second.last_start)
      return false;
  return true;
}

// The message decode gives for `text`, with the jobs it was handed unchanged.
std::string refused(const std::string& text) {
  EarlierServices jobs = sample();
  std::string why;
  ck_assert_msg(!decode_preempt_state(text, &jobs, &why), "accepted: '%s'", text.c_str());
  ck_assert(same(jobs, sample()));
  return why;
}

std::string read_all(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

START_TEST(test_round_trip) {
  const std::string text = encode_preempt_state(sample());
  CK_STR_EQ(text.substr(0, text.find('\n') + 1), "duet-preempt-state 2 3\n");
  ck_assert(text.find("\n41 620.5 158848 1 1764681000\n") != std::string::npos);
  ck_assert(text.find("\n4000000000 0 0 1000 9223372036854775807\n") != std::string::npos);
  EarlierServices back;
  std::string why;
  ck_assert_msg(decode_preempt_state(text, &back, &why), "%s", why.c_str());
  ck_assert(same(back, sample()));
  // empty memory: a header alone
  CK_STR_EQ(encode_preempt_state({}), "duet-preempt-state 2 0\n");
  back = sample();
  ck_assert(decode_preempt_state("duet-preempt-state 2 0\n", &back, &why));
  ck_assert(back.empty());
  CK_STR_EQ(preempt_state_summary(sample()),
            "JobId=41 (1x, 620 s, 158848 GPU-s), JobId=57 (2x, 0 s, 0 GPU-s), JobId=4000000000 (1000x, 0 s, 0 GPU-s)");
  CK_STR_EQ(preempt_state_summary(sample(), 1), "JobId=41 (1x, 620 s, 158848 GPU-s) +2 more");
}
END_TEST

// A file written before the start time was kept: read, its runs' start
// times not known (0), written back as version 2.
START_TEST(test_version_1_read) {
  EarlierServices back;
  std::string why;
  ck_assert_msg(decode_preempt_state("duet-preempt-state 1 2\n41 620.5 158848 1\n57 4000 32000 2\n", &back, &why), "%s",
                why.c_str());
  EarlierServices want;
  want[41] = {620.5, 158848, 1, 0};
  want[57] = {4000, 32000, 2, 0};
  ck_assert(same(back, want));
  CK_STR_EQ(encode_preempt_state(back), "duet-preempt-state 2 2\n41 620.5 158848 1 0\n57 4000 32000 2 0\n");
  back = sample();
  ck_assert(decode_preempt_state("duet-preempt-state 1 0\n", &back, &why));
  ck_assert(back.empty());
}
END_TEST

START_TEST(test_damage_refused) {
  const std::string good = encode_preempt_state(sample());
  CK_STR_EQ(refused(""), "empty");
  CK_STR_EQ(refused(good.substr(0, good.size() - 3)), "truncated: the last line has no newline");
  CK_STR_EQ(refused(good.substr(0, good.rfind('\n', good.size() - 2) + 1)), "truncated: 2 of 3 jobs");
  CK_STR_EQ(refused("duet-select-state 1\nobserver x\n"),
            "not a duet-preempt-state file (first line 'duet-select-state 1')");
  CK_STR_EQ(refused("\x1b[2J\x01garbage\n"), "not a duet-preempt-state file (first line '\\x1b[2J\\x01garbage')");
  CK_STR_EQ(refused("duet-preempt-state 3 0\n"), "format version 3, this build reads versions 1 to 2");
  CK_STR_EQ(refused("duet-preempt-state 0 0\n"), "format version 0, this build reads versions 1 to 2");
  CK_STR_EQ(refused("duet-preempt-state 1\n"), "line 1: expected 'duet-preempt-state VERSION JOBS', got "
                                               "'duet-preempt-state 1'");
  CK_STR_EQ(refused("duet-preempt-state 1 -1\n"), "line 1: expected 'duet-preempt-state VERSION JOBS', got "
                                                  "'duet-preempt-state 1 -1'");
  CK_STR_EQ(refused("duet-preempt-state 2 1\n41 1 2 1 5\n42 1 2 1 5\n"),
            "line 3: more job lines than the 1 the header says");
  CK_STR_EQ(refused("duet-preempt-state 2 2\n41 1 2 1 5\n41 3 4 1 6\n"), "line 3: job 41 a second time");
  const std::string bad_lines[] = {
      "41 1 2",          "41 1 2 1 9",   "0 1 2 1",     "-41 1 2 1",   "41 -1 2 1",   "41 1 nan 1", "41 inf 2 1",
      "41 1e300 2 1",    "41 1 2 0",     "41 1 2 -1",   "41  1 2 1",   " 41 1 2 1",   "41 1 2 1 ",  "4294967296 1 2 1",
      "41 0x10 2 1",     "41 1 2 1.5",   "x 1 2 1",     "",            "41 1 2 2000000"};
  // version 1: four fields (a fifth is refused)
  for (const std::string& l : bad_lines) {
    const std::string why = refused("duet-preempt-state 1 1\n" + l + "\n");
    ck_assert_msg(why.rfind("line 2: expected 'JOBID RUN_S GPU_S PREEMPTIONS', got '", 0) == 0, "'%s': %s", l.c_str(),
                  why.c_str());
  }
  // version 2: the same four, and the last run's start time
  const std::string bad_lines_2[] = {
      "41 1 2 1",      "41 1 2 1 ",    "41 1 2 1 -5",  "41 1 2 1 +5", "41 1 2 1 x", "41 1 2 1 1.5",
      "41 1 2 1 0x10", "41 1 2 1 5 6", "41 1 2 1  5", "41 1 2 1 1e9", "0 1 2 1 5",  "41 1 2 0 5",
      "41 1 2 1 9223372036854775808",
  };
  for (const std::string& l : bad_lines_2) {
    const std::string why = refused("duet-preempt-state 2 1\n" + l + "\n");
    ck_assert_msg(why.rfind("line 2: expected 'JOBID RUN_S GPU_S PREEMPTIONS LAST_START', got '", 0) == 0, "'%s': %s",
                  l.c_str(), why.c_str());
  }
  // a long line is quoted cut short
  const std::string why = refused("duet-preempt-state 2 1\n" + std::string(500, '7') + "\n");
  ck_assert_msg(why.size() < 120 && why.find("...'") != std::string::npos, "%s", why.c_str());
  CK_STR_EQ(refused(std::string(kPreemptStateMaxBytes + 1, '\n')).substr(0, 9), "16777217 ");
}
END_TEST

START_TEST(test_file_written_whole_and_read) {
  char dir[] = "/tmp/check_preempt_state.XXXXXX";
  ck_assert_ptr_nonnull(mkdtemp(dir));
  const std::string path = std::string(dir) + "/duet_preempt_state.site_factor_duet";
  std::string bytes, why;
  ck_assert(read_state_file(path, getuid(), kPreemptStateMaxBytes, &bytes, &why) == StateRead::kMissing);
  // a PATH.new an older crash left with a loose mode is replaced, not reused
  std::ofstream(path + ".new") << "stale";
  chmod((path + ".new").c_str(), 0666);
  const std::string text = encode_preempt_state(sample());
  ck_assert_msg(write_state_file(path, text, &why), "%s", why.c_str());
  ck_assert(access((path + ".new").c_str(), F_OK) != 0);
  struct stat st {};
  ck_assert_int_eq(stat(path.c_str(), &st), 0);
  ck_assert_uint_eq(st.st_mode & 07777, 0600);
  CK_STR_EQ(read_all(path), text);
  ck_assert_msg(read_state_file(path, getuid(), kPreemptStateMaxBytes, &bytes, &why) == StateRead::kRead, "%s",
                why.c_str());
  CK_STR_EQ(bytes, text);
  // rewritten: the new text replaces the old
  ck_assert(write_state_file(path, "duet-preempt-state 2 0\n", &why));
  CK_STR_EQ(read_all(path), "duet-preempt-state 2 0\n");
  // too big
  ck_assert(read_state_file(path, getuid(), 10, &bytes, &why) == StateRead::kRefused);
  CK_STR_EQ(why, "23 bytes, more than 10");
  // writable by others: anyone could hand slurmctld service that steers the order
  chmod(path.c_str(), 0666);
  ck_assert(read_state_file(path, getuid(), kPreemptStateMaxBytes, &bytes, &why) == StateRead::kRefused);
  ck_assert_msg(why.rfind("the file is writable by others (mode 0666)", 0) == 0, "%s", why.c_str());
  // a directory that is not there: the write fails and says where
  ck_assert(!write_state_file(std::string(dir) + "/no/such", "x", &why));
  ck_assert_msg(why.rfind("cannot create " + std::string(dir) + "/no/such.new: ", 0) == 0, "%s", why.c_str());
  unlink(path.c_str());
  rmdir(dir);
}
END_TEST

bool same_service(Service a, Service b) { return a.run_s == b.run_s && a.attained_gpu_s == b.attained_gpu_s; }

// A run's service over all runs: its own when it has no earlier ones, added
// to theirs otherwise, unless it is the run last counted in them.
START_TEST(test_run_service) {
  const Service run{700, 179200};  // 700 s on 256 GPUs
  ck_assert(same_service(run_service(nullptr, 2000, run), run));
  const EarlierService earlier{620, 158720, 1, 1000};
  ck_assert(same_service(run_service(&earlier, 2000, run), {1320, 337920}));  // a later run
  // the phantom run: slurmctld, SIGKILLed after the state file was written
  // but before it saved the requeue, shows the preempted run (started at
  // 1000) still running; its 620 s are already counted
  ck_assert(same_service(run_service(&earlier, 1000, run), {620, 158720}));
  // start time not known (version 1): every run counts, even one started at 0
  const EarlierService v1{620, 158720, 1, 0};
  ck_assert(same_service(run_service(&v1, 1000, run), {1320, 337920}));
  ck_assert(same_service(run_service(&v1, 0, run), {1320, 337920}));
}
END_TEST

// A preemption records the run once: the phantom run preempted again (after
// a restart from the file) is neither added nor counted a second time.
START_TEST(test_record_preemption) {
  EarlierServices jobs;
  ck_assert(record_preemption(&jobs[41], 1000, {620, 158720}));
  ck_assert(same(jobs, {{41, {620, 158720, 1, 1000}}}));
  // slurmctld SIGKILLed and restarted: the file read back, the run at 1000 running again
  EarlierServices back;
  std::string why;
  ck_assert_msg(decode_preempt_state(encode_preempt_state(jobs), &back, &why), "%s", why.c_str());
  ck_assert(same(back, jobs));
  ck_assert(!record_preemption(&back[41], 1000, {700, 179200}));
  ck_assert(same(back, jobs));
  ck_assert(same_service(run_service(&back[41], 1000, {700, 179200}), {620, 158720}));
  // its next real run is counted
  ck_assert(record_preemption(&back[41], 5000, {10, 2560}));
  ck_assert(same(back, {{41, {630, 161280, 2, 5000}}}));
  // after a version 1 file: the first run recorded sets the start time
  EarlierService v1{620, 158720, 1, 0};
  ck_assert(record_preemption(&v1, 0, {1, 256}));
  ck_assert(record_preemption(&v1, 7000, {10, 2560}));
  ck_assert(v1.preemptions == 3 && v1.run_s == 631 && v1.last_start == 7000);
  // a start time the file cannot hold is kept as not known: the file stays readable
  EarlierServices odd;
  ck_assert(record_preemption(&odd[9], -5, {1, 1}));
  ck_assert_int_eq(odd[9].last_start, 0);
  ck_assert(decode_preempt_state(encode_preempt_state(odd), &back, &why));
}
END_TEST

int main() {
  Suite* s = suite_create("preempt_state");
  TCase* tc = tcase_create("preempt_state");
  tcase_add_test(tc, test_round_trip);
  tcase_add_test(tc, test_version_1_read);
  tcase_add_test(tc, test_damage_refused);
  tcase_add_test(tc, test_file_written_whole_and_read);
  tcase_add_test(tc, test_run_service);
  tcase_add_test(tc, test_record_preemption);
  suite_add_tcase(s, tc);
  return test_support::run_suite(s);
}
