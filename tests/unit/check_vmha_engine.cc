// vmha engine: the checkpoint state blob (encode/decode, damage rejected),
// output holding (streams held, files passed through) and exactly-once
// release on takeover. No KVM needed.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

#include "vmha/engine/epoch_state.h"
#include "vmha/engine/held_output.h"

#include <check.h>  // last: its macros clash with C++ headers

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
  ck_assert(s.message().find("1 or 2") != std::string::npos);
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
  Status s = release_unreleased(st, &written);
  dup2(saved, 1);
  close(saved);
  close(fd);
  ck_assert(s.ok());
  ck_assert_uint_eq(written, 4);
  ck_assert_str_eq(slurp(path).c_str(), "old\na\nbbb\nc\n");
  unlink(path);
}
END_TEST

START_TEST(sink_holds_streams_passes_files) {
  HeldOutputSink sink;
  char path[] = "/tmp/vmha-engine-XXXXXX";
  int fd = mkstemp(path);
  iovec v{const_cast<char*>("data"), 4};
  OutputTarget file{5, fd, "f.txt"};
  ck_assert_int_eq(sink.write(file, {&v, 1}, -1), 4);
  ck_assert(!sink.waiting());
  int out = dup(1);
  OutputTarget stream{1, out, ""};
  ck_assert_int_eq(sink.write(stream, {&v, 1}, -1), 4);
  ck_assert_int_eq(sink.write(stream, {&v, 1}, -1), 4);
  ck_assert(sink.waiting());
  auto recs = sink.take();
  ck_assert_uint_eq(recs.size(), 2);
  ck_assert_uint_eq(recs[1].seq, 2);
  ck_assert_uint_eq(recs[1].stream_pos, 4);
  ck_assert(!sink.waiting());
  close(out);
  close(fd);
  ck_assert_str_eq(slurp(path).c_str(), "data");
  unlink(path);
}
END_TEST

int main() {
  Suite* s = suite_create("vmha_engine");
  TCase* tc = tcase_create("engine");
  tcase_add_test(tc, state_round_trip);
  tcase_add_test(tc, state_damage_rejected);
  tcase_add_test(tc, release_exactly_once_by_file_size);
  tcase_add_test(tc, sink_holds_streams_passes_files);
  suite_add_tcase(s, tc);
  SRunner* sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
