// vmha engine: the checkpoint state blob (encode/decode, damage rejected),
// output holding (streams and file writes held, the guest's view of a file
// with held writes) and release on takeover (streams exactly once, file
// writes re-applied). No KVM needed.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>

#include "vmha/engine/epoch_state.h"
#include "vmha/output/held_output.h"

#include <check.h>  // last: its macros clash with C++ headers
#include "tests/unit/run_suite.h"

using namespace vmha;

namespace {

OutputRecord rec(uint64_t seq, int stream, uint64_t pos, const std::string& text) {
  OutputRecord r;
  r.seq = seq;
  r.stream = stream;
  r.stream_pos = pos;
  r.bytes.assign(text.begin(), text.end());
  return r;
}

std::string slurp(const char* path) {
  std::string s;
  int fd = open(path, O_RDONLY);
  char buf[4096];
  ssize_t n;
  while ((n = read(fd, buf, sizeof buf)) > 0) s.append(buf, static_cast<size_t>(n));
  close(fd);
  return s;
}

}  // namespace

START_TEST(state_round_trip) {
  EpochState st;
  st.epoch = 7;
  st.flags = EpochState::kFinished;
  st.end_kind = 0;
  st.end_code = 3;
  st.released_seq = 4;
  st.streams[1] = {1, 2, 10, 20};
  st.held = {rec(5, 1, 20, "line five\n"), rec(6, 2, 0, "err\n")};
  st.vm_state = {1, 2, 3};
  auto bytes = st.encode();
  EpochState back;
  ck_assert(EpochState::decode(bytes, &back).ok());
  ck_assert_uint_eq(back.epoch, 7);
  ck_assert_int_eq(back.end_code, 3);
  ck_assert_uint_eq(back.held.size(), 2);
  ck_assert_uint_eq(back.held[1].stream, 2);
  ck_assert_uint_eq(back.streams[1].released, 20);
  ck_assert_uint_eq(back.vm_state.size(), 3);
}
END_TEST

START_TEST(state_damage_rejected) {
  EpochState st;
  st.held = {rec(1, 1, 0, "x\n")};
  auto bytes = st.encode();
  EpochState back;
  auto cut = bytes;
  cut.resize(bytes.size() - 2);
  Status s = EpochState::decode(cut, &back);
  ck_assert(!s.ok());
  ck_assert(s.message().find("VM state") != std::string::npos);
  auto bad = bytes;
  bad[0] ^= 1;
  ck_assert(!EpochState::decode(bad, &back).ok());
  auto stream = bytes;
  // the record's stream field follows magic(8) epoch(8) flags kind code(12) seq(8) streams(64) count(4) seq(8)
  stream[8 + 8 + 12 + 8 + 64 + 4 + 8] = 9;
  s = EpochState::decode(stream, &back);
  ck_assert(!s.ok());
  ck_assert(s.message().find("0 (a file), 1 or 2") != std::string::npos);
}
END_TEST

// The backup's stdout is the primary's file: its size says what was released,
// including a record cut in the middle.
START_TEST(release_exactly_once_by_file_size) {
  char path[] = "/tmp/vmha-engine-XXXXXX";
  int fd = mkstemp(path);
  ck_assert_int_ge(fd, 0);
  ck_assert(write(fd, "old\n", 4) == 4);  // there before the run
  int saved = dup(1);
  dup2(fd, 1);
  EpochState st;
  st.streams[1] = describe_stream(1);  // base 4
  st.streams[1].released = 0;
  ck_assert(write(fd, "a\nbb", 4) == 4);  // the primary released "a\n" and half of "bbb\n"
  st.held = {rec(1, 1, 0, "a\n"), rec(2, 1, 2, "bbb\n"), rec(3, 1, 6, "c\n")};
  uint64_t written = 0;
  Status s = release_unreleased(st, "/", &written);
  dup2(saved, 1);
  close(saved);
  close(fd);
  ck_assert(s.ok());
  ck_assert_uint_eq(written, 4);
  ck_assert_str_eq(slurp(path).c_str(), "old\na\nbbb\nc\n");
  unlink(path);
}
END_TEST

// The primary lost this backup, went on alone and released output past the
// last checkpoint it committed: resuming that image would print it again.
START_TEST(release_refuses_a_checkpoint_older_than_the_output) {
  char path[] = "/tmp/vmha-engine-XXXXXX";
  int fd = mkstemp(path);
  ck_assert_int_ge(fd, 0);
  ck_assert(write(fd, "old\n", 4) == 4);
  int saved = dup(1);
  dup2(fd, 1);
  EpochState st;
  st.epoch = 2;
  st.streams[1] = describe_stream(1);  // base 4
  st.streams[1].released = 2;          // "a\n" before checkpoint 2
  st.held = {rec(2, 1, 2, "bb\n")};
  // Out: "a\n", "bb\n" (covered), then "c\n" from an epoch the backup never committed.
  ck_assert(write(fd, "a\nbb\nc\n", 7) == 7);
  uint64_t written = 0;
  Status s = release_unreleased(st, "/", &written);
  // Up to the end of the checkpoint's records is fine (the primary died after releasing them).
  st.held.push_back(rec(3, 1, 5, "c\n"));
  uint64_t written_ok = 1;
  Status ok = release_unreleased(st, "/", &written_ok);
  dup2(saved, 1);
  close(saved);
  close(fd);
  ck_assert(!s.ok());
  ck_assert(s.message().find("checkpoint 2 is older than the output") != std::string::npos);
  ck_assert_uint_eq(written, 0);
  ck_assert(ok.ok());
  ck_assert_uint_eq(written_ok, 0);
  ck_assert_str_eq(slurp(path).c_str(), "old\na\nbb\nc\n");
  unlink(path);
}
END_TEST

START_TEST(sink_holds_streams) {
  HeldOutputSink sink;
  iovec v{const_cast<char*>("data"), 4};
  int out = dup(1);
  OutputTarget stream{1, out, ""};
  ck_assert_int_eq(sink.write(stream, {&v, 1}, -1), 4);
  ck_assert_int_eq(sink.write(stream, {&v, 1}, -1), 4);
  ck_assert(sink.waiting());
  ck_assert(!sink.holds_files());
  auto recs = sink.take();
  ck_assert_uint_eq(recs.size(), 2);
  ck_assert_uint_eq(recs[1].seq, 2);
  ck_assert_uint_eq(recs[1].stream_pos, 4);
  ck_assert(!recs[1].is_file());
  ck_assert(!sink.waiting());
  close(out);
}
END_TEST

// A fresh temporary file (name written into path) holding "0123"; its fd.
static int file_with_0123(char* path) {
  int fd = mkstemp(path);
  ck_assert(fd >= 0 && write(fd, "0123", 4) == 4);
  return fd;
}

// File writes are held: the host file does not change, the fd's position
// and the size the guest sees do; reads wait, changes wait; after the
// release (in order, at the resolved offsets) the file is what a direct
// write would have made, even after the guest closed its fd.
START_TEST(sink_holds_file_writes) {
  HeldOutputSink sink;
  char path[] = "/tmp/vmha-engine-XXXXXX";
  int fd = file_with_0123(path);  // there before the run
  lseek(fd, 0, SEEK_SET);
  iovec ab{const_cast<char*>("ab"), 2}, xyz{const_cast<char*>("xyz"), 3}, q{const_cast<char*>("Q"), 1};
  OutputTarget file{5, fd, "f.txt"};
  ck_assert_int_eq(sink.write(file, {&ab, 1}, -1), 2);  // at 0: "ab23"
  ck_assert_int_eq(lseek(fd, 0, SEEK_CUR), 2);
  ck_assert_int_eq(sink.write(file, {&xyz, 1}, 6), 3);  // pwrite at 6: "ab23\0\0xyz", position stays
  ck_assert_int_eq(lseek(fd, 0, SEEK_CUR), 2);
  int app = open(path, O_WRONLY | O_APPEND);
  OutputTarget appender{6, app, "f.txt"};
  ck_assert_int_eq(sink.write(appender, {&q, 1}, -1), 1);  // appends after the held end: at 9
  ck_assert_int_eq(lseek(app, 0, SEEK_CUR), 10);
  ck_assert_str_eq(slurp(path).c_str(), "0123");  // nothing on the host yet
  ck_assert(sink.holds_files());
  ck_assert(!sink.waiting());  // file writes alone do not end an epoch early
  struct stat st;
  ck_assert_int_eq(sink.stat_as_guest([&](struct stat* x) { return fstat(fd, x); }, &st), 0);
  ck_assert_int_eq(st.st_size, 10);
  ck_assert(sink.must_wait(fd));
  int other = open("/dev/null", O_RDONLY);
  ck_assert(!sink.must_wait(other));  // other files read at once
  bool ran = false;
  ck_assert_int_eq(sink.change("unlink x",
                               [&] {
                                 ran = true;
                                 return 0L;
                               }),
                   kWaitForRelease);
  ck_assert(!ran);
  ck_assert(sink.release_wanted());  // the guest waits for this epoch's writes
  close(fd);
  close(app);
  auto recs = sink.take();
  ck_assert(!sink.release_wanted());  // taken: the epoch has ended
  ck_assert_uint_eq(recs.size(), 3);
  ck_assert(recs[0].is_file());
  ck_assert_str_eq(recs[0].path.c_str(), "f.txt");
  ck_assert_uint_eq(recs[1].stream_pos, 6);
  ck_assert_uint_eq(recs[2].stream_pos, 9);
  for (const auto& r : recs) ck_assert(sink.release_file(r));
  ck_assert(!sink.holds_files());
  std::string want("ab23\0\0xyzQ", 10);
  ck_assert(slurp(path) == want);
  ck_assert_int_eq(sink.change("unlink x",
                               [&] {
                                 ran = true;
                                 return 0L;
                               }),
                   0);
  ck_assert(ran);
  close(other);
  unlink(path);
}
END_TEST

// The size the guest sees when a release comes between the host's stat and
// the adjustment for held writes: the release (pwrite, then the hold is
// dropped) cannot hide both. filelog's lseek(SEEK_END) check saw the old
// size alone on a loaded host when the two steps were apart.
START_TEST(guest_size_while_releasing) {
  HeldOutputSink sink;
  char path[] = "/tmp/vmha-engine-XXXXXX";
  int fd = file_with_0123(path);
  iovec six{const_cast<char*>("456789"), 6};
  OutputTarget file{5, fd, "f.txt"};
  ck_assert_int_eq(sink.write(file, {&six, 1}, -1), 6);  // held: the guest sees 10 bytes
  auto recs = sink.take();
  std::thread releaser;
  struct stat st;
  int rc = sink.stat_as_guest(
      [&](struct stat* x) {
        int r = fstat(fd, x);  // the host still says 4
        releaser = std::thread([&] {
          for (const auto& rec : recs) ck_assert(sink.release_file(rec));
        });
        // The release runs meanwhile: wait until its write is on the host (it
        // then waits for the sink, which this stat holds).
        struct stat now;
        for (auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
             fstat(fd, &now) == 0 && now.st_size != 10 && std::chrono::steady_clock::now() < until;)
          std::this_thread::sleep_for(std::chrono::milliseconds(1));
        return r;
      },
      &st);
  releaser.join();
  ck_assert_int_eq(rc, 0);
  ck_assert_int_eq(st.st_size, 10);
  ck_assert(!sink.holds_files());
  ck_assert_int_eq(sink.stat_as_guest([&](struct stat* x) { return fstat(fd, x); }, &st), 0);
  ck_assert_int_eq(st.st_size, 10);  // now from the host
  close(fd);
  unlink(path);
}
END_TEST

// Takeover: a checkpoint's file writes are written again beneath the working
// directory (twice is the same as once); a file gone since is skipped.
START_TEST(takeover_reapplies_file_writes) {
  char dir[] = "/tmp/vmha-engine-XXXXXX";
  ck_assert(mkdtemp(dir));
  std::string path = std::string(dir) + "/out.dat";
  int fd = open(path.c_str(), O_WRONLY | O_CREAT, 0644);
  ck_assert(write(fd, "abcdef", 6) == 6);
  close(fd);
  EpochState st;
  OutputRecord a = rec(1, 0, 2, "XY");
  a.path = "out.dat";
  OutputRecord b = rec(2, 0, 6, "gh");
  b.path = "out.dat";
  OutputRecord gone = rec(3, 0, 0, "zz");
  gone.path = "removed.dat";
  st.held = {a, gone, b};
  auto bytes = st.encode();
  EpochState back;
  ck_assert(EpochState::decode(bytes, &back).ok());
  ck_assert_str_eq(back.held[1].path.c_str(), "removed.dat");
  ck_assert_uint_eq(back.held[2].stream_pos, 6);
  for (int i = 0; i < 2; ++i) {
    uint64_t written = 0;
    ck_assert(release_unreleased(back, dir, &written).ok());
    ck_assert_uint_eq(written, 4);
    ck_assert_str_eq(slurp(path.c_str()).c_str(), "abXYefgh");
  }
  // A record pointing outside the working directory is refused, not written.
  back.held = {rec(1, 0, 0, "no")};
  back.held[0].path = "../escape.dat";
  uint64_t written = 0;
  ck_assert(!release_unreleased(back, dir, &written).ok());
  unlink(path.c_str());
  rmdir(dir);
}
END_TEST

int main() {
  Suite* s = suite_create("vmha_engine");
  TCase* tc = tcase_create("engine");
  tcase_set_timeout(tc, 60);  // Check's default, 4 s, fails on a loaded host
  tcase_add_test(tc, state_round_trip);
  tcase_add_test(tc, state_damage_rejected);
  tcase_add_test(tc, release_exactly_once_by_file_size);
  tcase_add_test(tc, release_refuses_a_checkpoint_older_than_the_output);
  tcase_add_test(tc, sink_holds_streams);
  tcase_add_test(tc, sink_holds_file_writes);
  tcase_add_test(tc, guest_size_while_releasing);
  tcase_add_test(tc, takeover_reapplies_file_writes);
  suite_add_tcase(s, tc);
  return test_support::run_suite(s);
}
