// RunStats (vmha/common/run_stats.h) and its key=value codec
// (vmha/common/key_value.h): what vmha's programs hand each other instead
// of log lines. A file round-trips; a forged count, a repeated or unknown
// key, another side's key, control characters, a huge file, a FIFO or a
// symlink are refused (or escaped), never read half-way.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <string>

#include "vmha/common/key_value.h"
#include "vmha/common/remove_tree.h"
#include "vmha/common/run_stats.h"

#include <check.h>  // last: it defines a fail() macro
#include "tests/unit/run_suite.h"

using namespace vmha;

namespace {

std::string g_dir;

void setup() {
  char tmpl[] = "/tmp/check_vmha_run_stats.XXXXXX";
  ck_assert(mkdtemp(tmpl));
  g_dir = tmpl;
}

void teardown() {
  std::string error;
  ck_assert_msg(remove_tree(AT_FDCWD, g_dir, g_dir, &error), "%s", error.c_str());
}

const char kPrimaryHead[] = "format=vmha-run-stats/1\nside=primary\n";

}  // namespace

START_TEST(primary_and_backup_round_trip) {
  RunStats p;
  p.checkpoints = 41;
  p.epochs = 42;
  p.pause_ms_mean = 0.25;
  p.pause_ms_max = 3.5;
  p.pause_count = 42;
  p.zero_pages = 7;
  p.stopped = true;
  p.guest_signal = 9;
  ck_assert(write_run_stats(g_dir + "/p", p).ok());
  RunStats back;
  Status s = read_run_stats(g_dir + "/p", &back);
  ck_assert_msg(s.ok(), "%s", s.message().c_str());
  ck_assert(back.side == RunStats::Side::kPrimary && !back.running);
  ck_assert_uint_eq(back.checkpoints, 41);
  ck_assert_uint_eq(back.epochs, 42);
  ck_assert_double_eq_tol(back.pause_ms_mean, 0.25, 1e-9);
  ck_assert_double_eq_tol(back.pause_ms_max, 3.5, 1e-9);
  ck_assert_uint_eq(back.zero_pages, 7);
  ck_assert(back.stopped && !back.backup_lost && !back.unprotected);
  ck_assert_int_eq(back.guest_signal, 9);
  ck_assert_msg(access((g_dir + "/p.tmp").c_str(), F_OK) != 0, "the temp file stays behind");

  // While it runs: running=1 and the acknowledged checkpoint, no totals.
  RunStats live;
  live.running = true;
  live.checkpoints = 3;
  const std::string text = format_run_stats(live);
  ck_assert_msg(text == std::string(kPrimaryHead) + "running=1\ncheckpoints=3\n", "%s", text.c_str());

  RunStats b;
  b.side = RunStats::Side::kBackup;
  b.takeover = true;
  b.checkpoint = 17;
  b.undone = 2;
  b.threads = 4;
  ck_assert(write_run_stats(g_dir + "/b", b).ok());
  RunStats bb;
  ck_assert(read_run_stats(g_dir + "/b", &bb).ok());
  ck_assert(bb.side == RunStats::Side::kBackup && bb.takeover);
  ck_assert_uint_eq(bb.checkpoint, 17);
  ck_assert_uint_eq(bb.undone, 2);
  ck_assert_uint_eq(bb.threads, 4);

  RunStats l;
  l.side = RunStats::Side::kLocal;
  l.syscalls = 123456;
  RunStats lb;
  ck_assert(parse_run_stats(format_run_stats(l), &lb).ok());
  ck_assert(lb.side == RunStats::Side::kLocal);
  ck_assert_uint_eq(lb.syscalls, 123456);
}
END_TEST

START_TEST(forged_values_are_refused_whole) {
  const std::string head = kPrimaryHead;
  struct {
    std::string text, error;  // what the reader must say
  } forged[] = {
      {head + "epochs=1e30\n", "line 3: epochs: expected an integer 0..1000000000000, got '1e30'"},
      {head + "epochs=-3\n", "line 3: epochs: expected an integer"},
      {head + "epochs= 5\n", "line 3: epochs: expected an integer"},
      {head + "epochs=0x10\n", "line 3: epochs: expected an integer"},
      {head + "epochs=99999999999999999999\n", "line 3: epochs: expected an integer"},
      {head + "epochs=1\nepochs=1000\n", "line 4: epochs given twice"},
      {head + "pause_ms_mean=nan\n", "line 3: pause_ms_mean: expected a decimal"},
      {head + "pause_ms_mean=1e400\n", "line 3: pause_ms_mean: expected a decimal"},
      {head + "stopped=2\n", "line 3: stopped: expected 0 or 1"},
      {head + "guest_signal=65\n", "line 3: guest_signal: expected an integer 0..64"},
      {head + "takeover=1\n", "line 3: unknown key 'takeover'"},  // the backup's key in the primary's file
      {head + "failovers=99\n", "line 3: unknown key 'failovers'"},
      {head + "garbage\n", "line 3: expected key=value, got 'garbage'"},
      {head + "Epochs=1\n", "line 3: expected key=value"},
      {"side=primary\nepochs=1\n", "no format= line"},
      {"format=vmha-run-stats/2\nside=primary\n", "line 1: format: expected vmha-run-stats/1"},
      {"format=vmha-run-stats/1\nside=both\n", "side: expected primary, backup or local"},
      {"format=vmha-run-stats/1\nside=backup\ntakeover=1\nthreads=2000000\n", "line 4: threads: expected an integer"},
      {"format=vmha-run-stats/1\nside=local\nepochs=1\n", "line 3: unknown key 'epochs'"},
      {head + std::string(100, 'x') + "=1\n", "expected key=value"},
  };
  for (const auto& f : forged) {
    RunStats r;
    r.epochs = 5;
    Status s = parse_run_stats(f.text, &r);
    ck_assert_msg(!s.ok(), "accepted: %s", f.text.c_str());
    ck_assert_msg(s.message().find(f.error) != std::string::npos, "'%s' said '%s'", f.text.c_str(),
                  s.message().c_str());
    ck_assert_msg(r.epochs == 5, "a refused file changed the statistics: %s", f.text.c_str());
  }
  std::string many = head;
  for (int i = 0; i < 70; ++i) many += "k" + std::to_string(i) + "=1\n";
  RunStats r;
  ck_assert(parse_run_stats(many, &r).message().find("more than 64 lines") != std::string::npos);
}
END_TEST

START_TEST(control_characters_are_escaped) {
  RunStats r;
  // A forged line with a terminal escape and a carriage return: refused,
  // and the error quotes it escaped (it reaches root's logs).
  Status s = parse_run_stats(std::string(kPrimaryHead) + "epochs=1\x1b]0;title\x07\rvmha: forged\n", &r);
  ck_assert(!s.ok());
  ck_assert_msg(s.message().find('\x1b') == std::string::npos && s.message().find('\r') == std::string::npos &&
                    s.message().find("\\x1b]0;title\\x07\\x0dvmha") != std::string::npos,
                "%s", s.message().c_str());
  ck_assert_str_eq(printable("a\nb\\c\x7f", 100).c_str(), "a\\x0ab\\x5cc\\x7f");
  ck_assert_str_eq(printable("abcdef", 3).c_str(), "abc");
  // The writer keeps a text value on its line, whatever it holds.
  KeyValueWriter w;
  w.text("cause", "killed\nforged=1");
  ck_assert_str_eq(w.str().c_str(), "cause=killed forged=1\n");
  Result<KeyValues> kv = KeyValues::parse(w.str());
  ck_assert(kv.ok());
  ck_assert(!kv.value().has("forged"));
}
END_TEST

START_TEST(the_reader_opens_only_a_small_regular_file) {
  RunStats r;
  // A symlink to a file vmha could read (a root-run reader must not follow it).
  RunStats p;
  p.epochs = 9;
  ck_assert(write_run_stats(g_dir + "/real", p).ok());
  ck_assert_int_eq(symlink((g_dir + "/real").c_str(), (g_dir + "/link").c_str()), 0);
  Status s = read_run_stats(g_dir + "/link", &r);
  ck_assert_msg(s.message() == "a symlink (not followed)", "%s", s.message().c_str());
  ck_assert_uint_eq(r.epochs, 0);
  // A FIFO: not waited on.
  ck_assert_int_eq(mkfifo((g_dir + "/fifo").c_str(), 0600), 0);
  s = read_run_stats(g_dir + "/fifo", &r);
  ck_assert_msg(s.message() == "not a regular file", "%s", s.message().c_str());
  // A huge (sparse) file: refused by its size, not read.
  int fd = open((g_dir + "/huge").c_str(), O_WRONLY | O_CREAT, 0600);
  ck_assert_int_ge(fd, 0);
  ck_assert_int_eq(ftruncate(fd, 1 << 30), 0);
  close(fd);
  s = read_run_stats(g_dir + "/huge", &r);
  ck_assert_msg(s.message() == "larger than 4096 bytes", "%s", s.message().c_str());
  // Not there (yet): told apart from a bad file.
  s = read_run_stats(g_dir + "/none", &r);
  ck_assert(missing(s));
  ck_assert(!missing(read_run_stats(g_dir + "/fifo", &r)));
  // The writer's temp file planted as a symlink: not followed, nothing written through it.
  ck_assert_int_eq(symlink((g_dir + "/victim").c_str(), (g_dir + "/out.tmp").c_str()), 0);
  ck_assert(!write_run_stats(g_dir + "/out", p).ok());
  ck_assert(access((g_dir + "/victim").c_str(), F_OK) != 0);
}
END_TEST

int main() {
  Suite* s = suite_create("vmha_run_stats");
  TCase* tc = tcase_create("core");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, primary_and_backup_round_trip);
  tcase_add_test(tc, forged_values_are_refused_whole);
  tcase_add_test(tc, control_characters_are_escaped);
  tcase_add_test(tc, the_reader_opens_only_a_small_regular_file);
  suite_add_tcase(s, tc);
  return test_support::run_suite(s);
}
