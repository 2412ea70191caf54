// The agents' channel (plugins/channel/agent_channel.h), linked as the shared
// library the plugins use: publish/read, replace, missing -> no message
// (zeros), attach/detach, one instance per process, and a thread smoke test.
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <thread>
#include <vector>

#include "plugins/channel/agent_channel.h"

#include <check.h>  // last: it defines a fail() macro

using duet::plugin::AgentChannel;

START_TEST(test_placement_message) {
  AgentChannel ch;
  std::vector<float> out = {9, 9};
  ck_assert(!ch.placement_message(out));  // none yet: empty = zeros
  ck_assert(out.empty());
  const std::vector<float> m = {0.5f, -0.25f, 0.0f, 1.0f};
  ch.publish_placement_message(m);
  ck_assert(ch.placement_message(out));
  ck_assert(out == m);
  const std::vector<float> m2 = {0.1f, 0.2f, 0.3f, 0.4f};
  ch.publish_placement_message(m2);  // replaces
  ck_assert(ch.placement_message(out));
  ck_assert(out == m2);
  ch.publish_placement_message({});  // withdrawn
  ck_assert(!ch.placement_message(out));
  ck_assert(out.empty());
  ck_assert_uint_eq(ch.placement_publications(), 3);
}
END_TEST

START_TEST(test_order_messages) {
  AgentChannel ch;
  std::vector<float> out;
  ck_assert(!ch.order_message(7, out));
  // jobs out of id order; row i is job_ids[i]'s
  const std::vector<uint32_t> ids = {30, 10, 20};
  const std::vector<float> rows = {3, 3.5f, 1, 1.5f, 2, 2.5f};
  ch.publish_order_messages(ids, rows, 2);
  ck_assert_uint_eq(ch.order_message_count(), 3);
  ck_assert(ch.order_message(10, out) && out == std::vector<float>({1, 1.5f}));
  ck_assert(ch.order_message(20, out) && out == std::vector<float>({2, 2.5f}));
  ck_assert(ch.order_message(30, out) && out == std::vector<float>({3, 3.5f}));
  ck_assert(!ch.order_message(15, out) && out.empty());
  ck_assert(!ch.order_message(31, out) && out.empty());
  // the next pass replaces the whole set: job 10 started, 40 is new
  const std::vector<uint32_t> ids2 = {40, 20};
  const std::vector<float> rows2 = {4, 4.5f, 5, 5.5f};
  ch.publish_order_messages(ids2, rows2, 2);
  ck_assert_uint_eq(ch.order_message_count(), 2);
  ck_assert(!ch.order_message(10, out) && out.empty());
  ck_assert(!ch.order_message(30, out));
  ck_assert(ch.order_message(20, out) && out == std::vector<float>({5, 5.5f}));
  ck_assert(ch.order_message(40, out) && out == std::vector<float>({4, 4.5f}));
  // sizes that do not match: nothing published (the old set is gone too)
  const std::vector<float> short_rows = {1, 2, 3};
  ch.publish_order_messages(ids2, short_rows, 2);
  ck_assert_uint_eq(ch.order_message_count(), 0);
  ck_assert(!ch.order_message(40, out));
  ch.publish_order_messages(ids2, rows2, 0);
  ck_assert_uint_eq(ch.order_message_count(), 0);
  // a job listed twice keeps its first row
  const std::vector<uint32_t> dup = {5, 5};
  const std::vector<float> rows3 = {1, 2};
  ch.publish_order_messages(dup, rows3, 1);
  ck_assert(ch.order_message(5, out) && out == std::vector<float>({1}));
  ch.clear_order_messages();
  ck_assert(!ch.order_message(5, out));
  // an empty pass is a valid pass with no jobs
  ch.publish_order_messages({}, {}, 4);
  ck_assert_uint_eq(ch.order_message_count(), 0);
  ck_assert_uint_eq(ch.order_publications(), 6);
}
END_TEST

START_TEST(test_attach_detach) {
  AgentChannel ch;
  using A = AgentChannel::Agent;
  ck_assert(!ch.attached(A::kPlacement) && !ch.attached(A::kOrdering));
  ch.attach(A::kPlacement, true);
  ck_assert(ch.attached(A::kPlacement) && !ch.attached(A::kOrdering));
  const std::vector<float> m = {1, 2, 3, 4};
  ch.publish_placement_message(m);
  const std::vector<uint32_t> ids = {1};
  ch.publish_order_messages(ids, m, 4);
  ch.attach(A::kOrdering, true);
  ck_assert(ch.attached(A::kOrdering));
  // detaching drops what that side published, not the other side's
  ch.attach(A::kPlacement, false);
  std::vector<float> out;
  ck_assert(!ch.attached(A::kPlacement) && !ch.placement_message(out));
  ck_assert(ch.order_message(1, out));
  ch.attach(A::kOrdering, false);
  ck_assert(!ch.order_message(1, out));
}
END_TEST

START_TEST(test_process_instance) {
  // the plugins' one channel: same object on every call
  ck_assert_ptr_nonnull(duet::plugin::agent_channel());
  ck_assert_ptr_eq(duet::plugin::agent_channel(), duet::plugin::agent_channel());
}
END_TEST

// Writers replace messages while readers copy them out: every read is one
// whole published message (all four values equal), never a torn mix.
START_TEST(test_threads_smoke) {
  AgentChannel ch;
  std::atomic<bool> stop{false};
  std::atomic<long> torn{0}, reads{0};
  std::atomic<int> readers_reading{0};
  // The writers start once both readers have read, so reads overlap the
  // writes however the host schedules the threads.
  auto wait_for_readers = [&] {
    while (readers_reading.load() < 2) std::this_thread::yield();
  };
  auto placement_writer = [&] {
    wait_for_readers();
    for (int k = 1; k <= 20000; ++k) {
      const float v = static_cast<float>(k);
      const std::vector<float> m = {v, v, v, v};
      ch.publish_placement_message(m);
    }
  };
  auto order_writer = [&] {
    wait_for_readers();
    std::vector<uint32_t> ids(64);
    std::vector<float> rows(64 * 4);
    for (int k = 1; k <= 2000; ++k) {
      for (size_t i = 0; i < ids.size(); ++i) ids[i] = static_cast<uint32_t>(i * 2 + (k & 1));
      for (float& x : rows) x = static_cast<float>(k);
      ch.publish_order_messages(ids, rows, 4);
    }
  };
  auto reader = [&] {
    std::vector<float> out;
    uint32_t id = 0;
    bool first = true;
    while (!stop.load()) {
      if (ch.placement_message(out) && !(out.size() == 4 && out[0] == out[1] && out[1] == out[2] && out[2] == out[3]))
        ++torn;
      if (ch.order_message(id++ % 128, out) && !(out.size() == 4 && out[0] == out[3])) ++torn;
      ++reads;
      if (first) ++readers_reading, first = false;
    }
  };
  std::thread r1(reader), r2(reader);
  std::thread w1(placement_writer), w2(order_writer);
  w1.join();
  w2.join();
  stop = true;
  r1.join();
  r2.join();
  ck_assert_int_eq(torn.load(), 0);
  ck_assert(reads.load() > 0);
  std::vector<float> out;
  ck_assert(ch.placement_message(out) && out[0] == 20000.0f);
  ck_assert(ch.order_message(0, out) && out[0] == 2000.0f);  // last pass: even ids
  ck_assert(!ch.order_message(1, out));
}
END_TEST

int main() {
  Suite* s = suite_create("agent_channel");
  TCase* tc = tcase_create("core");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, test_placement_message);
  tcase_add_test(tc, test_order_messages);
  tcase_add_test(tc, test_attach_detach);
  tcase_add_test(tc, test_process_instance);
  tcase_add_test(tc, test_threads_smoke);
  suite_add_tcase(s, tc);
  SRunner* sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
