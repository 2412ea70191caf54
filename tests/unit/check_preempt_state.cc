// The ordering plugins' memory of the jobs they preempted, as its state file
// keeps it across slurmctld restarts: the text (round trip, every damage
// refused with a message saying what) and the file (written whole, mode
// 0600; refused when others could have written it).
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
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
  s[41] = {620.5, 158848, 1};
  s[57] = {0.1, 1.0 / 3.0, 2};  // not exact in decimal: must read back bit for bit
  s[4000000000u] = {0, 0, 1000};
  return s;
}

bool same(const EarlierServices& a, const EarlierServices& b) {
  if (a.size() != b.size()) return false;
  for (auto i = a.begin(), j = b.begin(); i != a.end(); ++i, ++j)
    if (i->first != j->first || i->second.run_s != j->second.run_s ||
        i->second.attained_gpu_s != j->second.attained_gpu_s || i->second.preemptions != j->second.preemptions)
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
  CK_STR_EQ(text.substr(0, text.find('\n') + 1), "duet-preempt-state 1 3\n");
  ck_assert(text.find("\n41 620.5 158848 1\n") != std::string::npos);
  EarlierServices back;
  std::string why;
  ck_assert_msg(decode_preempt_state(text, &back, &why), "%s", why.c_str());
  ck_assert(same(back, sample()));
  // empty memory: a header alone
  CK_STR_EQ(encode_preempt_state({}), "duet-preempt-state 1 0\n");
  back = sample();
  ck_assert(decode_preempt_state("duet-preempt-state 1 0\n", &back, &why));
  ck_assert(back.empty());
  CK_STR_EQ(preempt_state_summary(sample()),
            "JobId=41 (1x, 620 s, 158848 GPU-s), JobId=57 (2x, 0 s, 0 GPU-s), JobId=4000000000 (1000x, 0 s, 0 GPU-s)");
  CK_STR_EQ(preempt_state_summary(sample(), 1), "JobId=41 (1x, 620 s, 158848 GPU-s) +2 more");
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
  CK_STR_EQ(refused("duet-preempt-state 2 0\n"), "format version 2, this build reads version 1");
  CK_STR_EQ(refused("duet-preempt-state 1\n"), "line 1: expected 'duet-preempt-state VERSION JOBS', got "
                                               "'duet-preempt-state 1'");
  CK_STR_EQ(refused("duet-preempt-state 1 -1\n"), "line 1: expected 'duet-preempt-state VERSION JOBS', got "
                                                  "'duet-preempt-state 1 -1'");
  CK_STR_EQ(refused("duet-preempt-state 1 1\n41 1 2 1\n42 1 2 1\n"),
            "line 3: more job lines than the 1 the header says");
  CK_STR_EQ(refused("duet-preempt-state 1 2\n41 1 2 1\n41 3 4 1\n"), "line 3: job 41 a second time");
  const std::string bad_lines[] = {
      "41 1 2",          "41 1 2 1 9",   "0 1 2 1",     "-41 1 2 1",   "41 -1 2 1",   "41 1 nan 1", "41 inf 2 1",
      "41 1e300 2 1",    "41 1 2 0",     "41 1 2 -1",   "41  1 2 1",   " 41 1 2 1",   "41 1 2 1 ",  "4294967296 1 2 1",
      "41 0x10 2 1",     "41 1 2 1.5",   "x 1 2 1",     "",            "41 1 2 2000000"};
  for (const std::string& l : bad_lines) {
    const std::string why = refused("duet-preempt-state 1 1\n" + l + "\n");
    ck_assert_msg(why.rfind("line 2: expected 'JOBID RUN_S GPU_S PREEMPTIONS', got '", 0) == 0, "'%s': %s", l.c_str(),
                  why.c_str());
  }
  // a long line is quoted cut short
  const std::string why = refused("duet-preempt-state 1 1\n" + std::string(500, '7') + "\n");
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
  ck_assert(write_state_file(path, "duet-preempt-state 1 0\n", &why));
  CK_STR_EQ(read_all(path), "duet-preempt-state 1 0\n");
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

int main() {
  Suite* s = suite_create("preempt_state");
  TCase* tc = tcase_create("preempt_state");
  tcase_add_test(tc, test_round_trip);
  tcase_add_test(tc, test_damage_refused);
  tcase_add_test(tc, test_file_written_whole_and_read);
  suite_add_tcase(s, tc);
  return test_support::run_suite(s);
}
