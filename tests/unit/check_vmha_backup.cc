// Backup side without a network: the image store (staging, atomic commit,
// abort, resync), the lease rule, and the checkpoint receiver driven by the
// primary's CheckpointSender over an in-memory channel.
#include <cstring>
#include <deque>
#include <memory>
#include <string>
#include <atomic>
#include <thread>
#include <vector>

#include "vmha/backup/image_store.h"
#include "vmha/backup/lease.h"
#include "vmha/checkpoint/checkpoint_receiver.h"
#include "vmha/checkpoint/checkpoint_sender.h"
#include "vmha/protocol/crc32c.h"

// Check defines macros (fail, ...) that clash with C++ headers: include it last.
#include <check.h>

using namespace vmha;
using namespace std::chrono_literals;

namespace {

constexpr std::size_t kPage = 4096;

bool has(const Status& s, const char* what) { return s.message().find(what) != std::string::npos; }

void fill(std::uint8_t* p, std::uint8_t v) { std::memset(p, v, kPage); }

std::uint8_t committed_byte(ImageStore& st, std::uint64_t page) {
  std::uint8_t b = 0;
  st.read_committed([&](const CommittedImage& img) { b = img.memory[page * kPage]; });
  return b;
}

// Two in-memory channel ends; pull() reads the other end's "registered" memory.
struct Pipe {
  std::deque<std::vector<std::uint8_t>> to_backup, to_primary;
};

class FakeChannel final : public Channel {
 public:
  FakeChannel(Pipe& pipe, bool primary) : pipe_(pipe), primary_(primary) {}
  Status send_encoded(std::span<const std::uint8_t> b) override {
    (primary_ ? pipe_.to_backup : pipe_.to_primary).emplace_back(b.begin(), b.end());
    return {};
  }
  Result<Frame> receive(std::chrono::milliseconds) override {
    auto& q = primary_ ? pipe_.to_primary : pipe_.to_backup;
    if (q.empty()) return Status::error("timeout: nothing queued");
    auto bytes = std::move(q.front());
    q.pop_front();
    return decode_frame(bytes);
  }
  Status pull(std::span<const PullOp> ops) override {
    for (const auto& op : ops) {
      if (op.region >= regions_.size() || op.offset + op.length > regions_[op.region].length)
        return Status::error("pull outside region");
      std::memcpy(op.dest, reinterpret_cast<const std::uint8_t*>(regions_[op.region].base) + op.offset, op.length);
      ++reads;
    }
    return {};
  }
  const std::vector<RegionInfo>& remote_regions() const override { return regions_; }
  bool connected() const override { return true; }
  std::string peer() const override { return "fake"; }
  void close() override {}

  void expose(std::uint8_t* base, std::size_t len) {
    regions_.push_back(RegionInfo{0, reinterpret_cast<std::uint64_t>(base), len, {}});
  }
  std::size_t reads = 0;

 private:
  Pipe& pipe_;
  bool primary_;
  std::vector<RegionInfo> regions_;
};

// Runs the receiver until nothing is queued; returns the last step or error.
Result<CheckpointReceiver::Step> drain(CheckpointReceiver& rx) {
  Result<CheckpointReceiver::Step> last = CheckpointReceiver::Step{};
  for (int i = 0; i < 10000; ++i) {
    auto s = rx.step(0ms);
    if (!s.ok()) return s;
    if (s.value().event == CheckpointReceiver::Event::kIdle) return last;
    last = s;
  }
  return Status::error("receiver did not go idle");
}

}  // namespace

START_TEST(store_commits_atomically_and_resyncs) {
  ImageStore st(kPage, 16);
  ck_assert_uint_eq(st.committed_epoch(), 0);
  ck_assert(st.begin(1).ok());
  fill(st.stage_page(3).value(), 0x33);
  fill(st.stage_page(4).value(), 0x44);
  ck_assert(st.stage_page(4).value() == st.stage_page(3).value() + kPage);  // contiguous
  ck_assert_uint_eq(st.staged_pages(), 2);
  // Staged but not committed: invisible.
  ck_assert_uint_eq(committed_byte(st, 3), 0);
  ck_assert(st.stage_state({1, 2, 3}).ok());
  std::vector<std::uint8_t> state{1, 2, 3};
  ck_assert(st.commit({1, 2, 3, crc32c(state)}).ok());
  ck_assert_uint_eq(st.committed_epoch(), 1);
  ck_assert_uint_eq(committed_byte(st, 3), 0x33);
  ck_assert_uint_eq(committed_byte(st, 4), 0x44);

  // Checkpoint 2 touches only page 5: pages 3, 4 must survive the swap.
  ck_assert(st.begin(2).ok());
  fill(st.stage_page(5).value(), 0x55);
  ck_assert(st.stage_state({9}).ok());
  std::vector<std::uint8_t> s2{9};
  ck_assert(st.commit({2, 1, 1, crc32c(s2)}).ok());
  ck_assert_uint_eq(committed_byte(st, 3), 0x33);
  ck_assert_uint_eq(committed_byte(st, 5), 0x55);
  st.read_committed([](const CommittedImage& img) {
    ck_assert_uint_eq(img.epoch, 2);
    ck_assert_uint_eq(img.state.size(), 1);
    ck_assert_uint_eq(img.state[0], 9);
  });
  // Checkpoint 3 reuses the slots: what it stages is invisible until its
  // commit, which keeps the pages it does not name.
  ck_assert(st.begin(3).ok());
  fill(st.stage_page(5).value(), 0x5a);
  ck_assert(st.stage_page(5).value() == st.stage_page(5).value());  // one slot per page
  ck_assert_uint_eq(committed_byte(st, 5), 0x55);
  ck_assert(st.stage_state({9}).ok());
  ck_assert(st.commit({3, 1, 1, crc32c(s2)}).ok());
  ck_assert_uint_eq(committed_byte(st, 3), 0x33);
  ck_assert_uint_eq(committed_byte(st, 4), 0x44);
  ck_assert_uint_eq(committed_byte(st, 5), 0x5a);
}
END_TEST

START_TEST(store_never_commits_a_partial_checkpoint) {
  ImageStore st(kPage, 8);
  ck_assert(st.begin(1).ok());
  fill(st.stage_page(1).value(), 0x11);
  ck_assert(st.stage_state({}).ok());
  ck_assert(st.commit({1, 1, 0, crc32c({})}).ok());

  // Wrong page count, missing state, wrong state crc, wrong epoch: all refused.
  struct Case {
    CheckpointSummary sum;
    bool with_state;
    const char* why;
  };
  std::vector<std::uint8_t> blob{7, 7};
  Case cases[] = {
      {{2, 2, 2, crc32c(blob)}, true, "received 1 distinct pages, primary sent 2"},
      {{2, 1, 2, crc32c(blob)}, false, "no state blob received"},
      {{2, 1, 2, 0x1234}, true, "state blob checksum mismatch"},
      {{2, 1, 3, crc32c(blob)}, true, "state blob has 2 bytes, primary sent 3"},
      {{5, 1, 2, crc32c(blob)}, true, "End names checkpoint 5, receiving 2"},
  };
  for (const auto& c : cases) {
    ck_assert(st.begin(2).ok());
    fill(st.stage_page(1).value(), 0x99);
    if (c.with_state) ck_assert(st.stage_state(blob).ok());
    Status s = st.commit(c.sum);
    ck_assert_msg(!s.ok() && has(s, c.why), "%s", s.message().c_str());
    ck_assert_msg(has(s, "the image stays at checkpoint 1"), "%s", s.message().c_str());
    ck_assert_uint_eq(st.committed_epoch(), 1);
    ck_assert_uint_eq(committed_byte(st, 1), 0x11);
  }
  // An abandoned checkpoint (no End) leaves the image as it was.
  ck_assert(st.begin(2).ok());
  fill(st.stage_page(1).value(), 0x98);
  st.abort("connection lost");
  ck_assert_msg(has(Status::error(st.last_abort_reason()), "checkpoint 2 discarded: connection lost"), "%s",
                st.last_abort_reason().c_str());
  ck_assert(st.begin(3).ok());
  ck_assert_uint_eq(committed_byte(st, 1), 0x11);
}
END_TEST

START_TEST(store_on_caller_memory) {
  std::vector<std::uint8_t> image(4 * kPage), slots(4 * kPage);
  ImageStore st(kPage, 4, image, slots);
  ck_assert(st.slot_area().data() == slots.data());
  ck_assert(st.begin(1).ok());
  fill(st.stage_page(2).value(), 0x22);
  // Nothing committed there yet: read straight into the image, invisible
  // to a reader of the committed image all the same.
  ck_assert(st.stage_page(2).value() == image.data() + 2 * kPage);
  ck_assert_uint_eq(committed_byte(st, 2), 0);
  ck_assert(st.stage_page(2).value() == slots.data());  // moved to the first slot by the read
  ck_assert_uint_eq(slots[0], 0x22);
  ck_assert(st.stage_state({}).ok());
  ck_assert(st.commit({1, 1, 0, crc32c({})}).ok());
  ck_assert_uint_eq(committed_byte(st, 2), 0x22);
  ck_assert_uint_eq(image[2 * kPage], 0x22);  // copied into the image by the read
  // A checkpoint as large as the guest: every page in its slot, then the image.
  ck_assert(st.begin(2).ok());
  for (std::uint64_t p = 0; p < 4; ++p) fill(st.stage_page(3 - p).value(), static_cast<std::uint8_t>(0xa0 + p));
  ck_assert(st.stage_state({}).ok());
  ck_assert(st.commit({2, 4, 0, crc32c({})}).ok());
  for (std::uint64_t p = 0; p < 4; ++p) ck_assert_uint_eq(committed_byte(st, 3 - p), 0xa0 + p);
  // Page 2 has committed content: a new checkpoint's copy goes to a slot,
  // and a discarded checkpoint leaves every page as committed.
  ck_assert(st.begin(3).ok());
  ck_assert(st.stage_page(2).value() == slots.data());
  fill(st.stage_page(2).value(), 0x99);
  st.abort("test");
  for (std::uint64_t p = 0; p < 4; ++p) ck_assert_uint_eq(committed_byte(st, 3 - p), 0xa0 + p);
}
END_TEST

// A page no checkpoint gave content is read into the image; a discarded
// checkpoint (superseded, refused, or aborted) leaves zeros there again.
START_TEST(store_fresh_pages_in_image) {
  std::vector<std::uint8_t> image(8 * kPage), slots(8 * kPage);
  ImageStore st(kPage, 8, image, slots);
  ck_assert(st.begin(1).ok());
  fill(st.stage_page(5).value(), 0x55);
  ck_assert_uint_eq(image[5 * kPage], 0x55);
  ck_assert(st.begin(2).ok());  // supersedes 1
  ck_assert_uint_eq(image[5 * kPage], 0);
  fill(st.stage_page(5).value(), 0x56);
  fill(st.stage_page(6).value(), 0x66);
  ck_assert(st.stage_state({}).ok());
  ck_assert(!st.commit({2, 3, 0, crc32c({})}).ok());  // wrong count: refused
  ck_assert_uint_eq(image[5 * kPage], 0);
  ck_assert_uint_eq(image[6 * kPage], 0);
  ck_assert(st.begin(3).ok());
  fill(st.stage_page(5).value(), 0x57);
  ck_assert(st.stage_zero(6).ok());
  ck_assert(st.stage_state({}).ok());
  ck_assert(st.commit({3, 2, 0, crc32c({})}).ok());
  ck_assert_uint_eq(committed_byte(st, 5), 0x57);
  ck_assert_uint_eq(committed_byte(st, 6), 0);
  // Page 5 has content now: checkpoint 4's copy goes to a slot, and the
  // committed 0x57 stays until it commits.
  ck_assert(st.begin(4).ok());
  ck_assert(st.stage_page(5).value() == slots.data());
  fill(st.stage_page(5).value(), 0x58);
  ck_assert_uint_eq(committed_byte(st, 5), 0x57);
  ck_assert(st.stage_state({}).ok());
  ck_assert(st.commit({4, 1, 0, crc32c({})}).ok());
  ck_assert_uint_eq(committed_byte(st, 5), 0x58);
}
END_TEST

START_TEST(store_rejects_bad_requests) {
  ImageStore st(kPage, 8);
  ck_assert(has(st.stage_page(0).status(), "outside a checkpoint"));
  ck_assert(st.begin(3).ok());
  ck_assert_msg(has(st.stage_page(8).status(), "page 8 is outside the guest image (8 pages)"), "%s",
                st.stage_page(8).status().message().c_str());
  ck_assert(st.stage_state({}).ok());
  ck_assert(st.commit({3, 0, 0, crc32c({})}).ok());
  Status old = st.begin(3);
  ck_assert_msg(has(old, "checkpoint 3 is not newer than the committed checkpoint 3"), "%s", old.message().c_str());
}
END_TEST

START_TEST(lease_needs_both_loss_and_silence) {
  auto t0 = Lease::Clock::time_point{} + 100s;
  Lease lease(500ms, t0);
  lease.connection_up(t0);
  ck_assert(!lease.peer_lost(t0 + 10s));  // silent but connected: a pause, not a loss
  lease.heard(t0 + 10s);
  lease.connection_lost();
  ck_assert(!lease.peer_lost(t0 + 10s + 400ms));  // gone, but heard recently
  ck_assert(lease.peer_lost(t0 + 10s + 600ms));   // gone and silent past the lease
  lease.connection_up(t0 + 11s);                  // reconnected
  ck_assert(!lease.peer_lost(t0 + 20s));
  lease.heard(t0);  // time never goes back
  ck_assert(lease.silence(t0 + 11s) == 0s);

  HeartbeatTimer hb(100ms, t0);
  ck_assert(!hb.due(t0 + 50ms));
  ck_assert(hb.due(t0 + 100ms));
  hb.sent(t0 + 100ms);
  ck_assert(!hb.due(t0 + 150ms));
}
END_TEST

START_TEST(receiver_commits_what_sender_sends) {
  const std::uint64_t pages = 64;
  std::vector<std::uint8_t> guest(pages * kPage);
  Pipe pipe;
  FakeChannel prim(pipe, true), back(pipe, false);
  back.expose(guest.data(), guest.size());
  ImageStore st(kPage, pages);
  Lease lease(1s, Lease::Clock::now());
  CheckpointReceiver rx(back, st, lease);
  CheckpointSender tx(prim, pages);

  for (std::uint64_t p = 0; p < pages; ++p) fill(&guest[p * kPage], static_cast<std::uint8_t>(p));
  ck_assert(tx.begin(1).ok());
  std::vector<PageRef> run;  // pages 10..19: one coalesced read
  for (std::uint64_t p = 10; p < 20; ++p) run.push_back({p, p * kPage});
  ck_assert(tx.send_pages(0, run).ok());
  ck_assert(drain(rx).ok());
  ck_assert_uint_eq(back.reads, 1);
  // Page 12 changes again; the residual list re-sends it with its checksum.
  fill(&guest[12 * kPage], 0xee);
  std::vector<PageRef> residual{{12, 12 * kPage}, {40, 40 * kPage}};
  std::vector<std::uint32_t> crcs{crc32c(0, &guest[12 * kPage], kPage), crc32c(0, &guest[40 * kPage], kPage)};
  std::uint32_t seq = 0;
  ck_assert(tx.send_pages(0, residual, crcs, true, &seq).ok());
  std::vector<std::uint8_t> state{42};
  ck_assert(tx.send_state(state).ok());
  ck_assert(tx.end().ok());
  ck_assert_uint_eq(tx.distinct_pages(), 11);
  auto last = drain(rx);
  ck_assert_msg(last.ok(), "%s", last.status().message().c_str());
  ck_assert(last.value().event == CheckpointReceiver::Event::kCommitted);
  ck_assert(tx.wait_pulled(seq, 0ms).ok());
  ck_assert(tx.wait_ack(1, 0ms).ok());
  ck_assert_uint_eq(committed_byte(st, 12), 0xee);
  ck_assert_uint_eq(committed_byte(st, 19), 19);
  ck_assert_uint_eq(committed_byte(st, 40), 40);
  ck_assert_uint_eq(committed_byte(st, 41), 0);  // never sent

  // Heartbeats are echoed with the committed epoch.
  ck_assert(tx.heartbeat().ok());
  ck_assert(drain(rx).ok());
  ck_assert(tx.poll(0ms).ok());
  ck_assert_uint_eq(rx.stats().heartbeats, 1);

  // Checkpoint 2: pages 10..39 become zero (named, not read); page 12 is
  // then read again (data wins, as the later word), page 19 read and then
  // named zero (zero wins).
  std::uint64_t reads_before = back.reads;
  std::vector<std::uint64_t> zeros;
  for (std::uint64_t p = 10; p < 40; ++p) zeros.push_back(p);
  ck_assert(tx.begin(2).ok());
  ck_assert(tx.send_pages(0, std::vector<PageRef>{{19, 19 * kPage}}).ok());
  ck_assert(tx.send_zero_pages(zeros).ok());
  fill(&guest[12 * kPage], 0x12);
  ck_assert(tx.send_pages(0, std::vector<PageRef>{{12, 12 * kPage}}).ok());
  ck_assert(tx.send_state(state).ok());
  ck_assert(tx.end().ok());
  ck_assert_uint_eq(tx.distinct_pages(), 30);
  last = drain(rx);
  ck_assert_msg(last.ok(), "%s", last.status().message().c_str());
  ck_assert(last.value().event == CheckpointReceiver::Event::kCommitted);
  ck_assert_uint_eq(back.reads - reads_before, 2);  // pages 19 and 12 only
  ck_assert_uint_eq(rx.stats().zero_pages, 30);
  ck_assert_uint_eq(committed_byte(st, 12), 0x12);
  ck_assert_uint_eq(committed_byte(st, 19), 0);
  ck_assert_uint_eq(committed_byte(st, 25), 0);
  ck_assert_uint_eq(committed_byte(st, 40), 40);  // not in checkpoint 2
  st.read_committed([&](const CommittedImage& img) {
    for (std::uint64_t p = 10; p < 40; ++p)
      for (std::size_t i = 0; i < kPage; i += 512)
        if (p != 12) ck_assert_uint_eq(img.memory[p * kPage + i], 0);
  });
}
END_TEST

// Zero pages in runs are given back to the system (owned memory) or
// cleared (caller memory); an aborted checkpoint of zero pages changes
// nothing.
START_TEST(store_zero_pages) {
  std::vector<std::uint8_t> image(64 * kPage), slots(64 * kPage);
  ImageStore caller(kPage, 64, image, slots);
  ImageStore owned(kPage, 64);
  for (ImageStore* st : {&caller, &owned}) {
    ck_assert(st->begin(1).ok());
    for (std::uint64_t p = 0; p < 64; ++p) fill(st->stage_page(p).value(), 0x77);
    ck_assert(st->stage_state({}).ok());
    ck_assert(st->commit({1, 64, 0, crc32c({})}).ok());
    ck_assert_uint_eq(committed_byte(*st, 63), 0x77);
    ck_assert(st->begin(2).ok());
    for (std::uint64_t p = 0; p < 40; ++p) ck_assert(st->stage_zero(p).ok());  // a run of 40, then one page
    ck_assert(st->stage_zero(50).ok());
    ck_assert(has(st->stage_zero(64), "page 64 is outside the guest image"));
    st->abort("test");
    ck_assert(st->begin(3).ok());
    ck_assert_uint_eq(committed_byte(*st, 5), 0x77);
    for (std::uint64_t p = 0; p < 40; ++p) ck_assert(st->stage_zero(p).ok());
    ck_assert(st->stage_zero(50).ok());
    ck_assert(st->stage_state({}).ok());
    ck_assert(st->commit({3, 41, 0, crc32c({})}).ok());
    st->read_committed([&](const CommittedImage& img) {
      for (std::uint64_t p = 0; p < 64; ++p) {
        std::uint8_t want = (p < 40 || p == 50) ? 0 : 0x77;
        ck_assert_msg(img.memory[p * kPage] == want && img.memory[p * kPage + kPage - 1] == want, "page %llu",
                      (unsigned long long)p);
      }
    });
  }
  ck_assert_uint_eq(image[10 * kPage], 0);
  ck_assert_uint_eq(image[45 * kPage], 0x77);
}
END_TEST

// A primary waiting for its acknowledgement keeps the backup's lease alive;
// without an interval it sends nothing while waiting.
// (The limit counts from the last word heard, not from the start: see
// a_backup_heard_on_its_liveness_path_is_waited_for.)
START_TEST(sender_sends_heartbeats_while_waiting) {
  for (bool beats : {true, false}) {
    Pipe pipe;
    FakeChannel prim(pipe, true);
    CheckpointSender tx(prim, 16);
    if (beats) tx.set_heartbeat_every(10ms);
    Status s = tx.wait_ack(1, 50ms);
    ck_assert_msg(has(s, "did not acknowledge checkpoint 1 and was silent for 50 ms"), "%s", s.message().c_str());
    std::size_t heartbeats = 0;
    for (const auto& bytes : pipe.to_backup) heartbeats += decode_frame(bytes).value().type == MessageType::kHeartbeat;
    if (beats)
      ck_assert_uint_ge(heartbeats, 1);
    else
      ck_assert_uint_eq(heartbeats, 0);
  }
}
END_TEST

// A backup that answers late but is heard all along on its liveness path
// (transport.h: a socket beat beside the data) is waited for, however long
// its answer takes; one that falls silent is lost after the limit.
START_TEST(a_backup_heard_on_its_liveness_path_is_waited_for) {
  struct BeatingChannel final : public Channel {
    explicit BeatingChannel(FakeChannel& c) : inner(c) {}
    Status send_encoded(std::span<const std::uint8_t> b) override { return inner.send_encoded(b); }
    Result<Frame> receive(std::chrono::milliseconds t) override { return inner.receive(t); }
    Status pull(std::span<const PullOp> ops) override { return inner.pull(ops); }
    const std::vector<RegionInfo>& remote_regions() const override { return inner.remote_regions(); }
    bool connected() const override { return true; }
    std::string peer() const override { return "beating"; }
    void close() override {}
    std::chrono::steady_clock::time_point liveness() const override {
      return beating.load() ? std::chrono::steady_clock::now() : last_beat;
    }
    FakeChannel& inner;
    std::atomic<bool> beating{true};
    std::chrono::steady_clock::time_point last_beat = std::chrono::steady_clock::now();
  };
  Pipe pipe;
  FakeChannel prim(pipe, true);
  BeatingChannel ch(prim);
  CheckpointSender tx(ch, 16);
  // Heard all along: still waiting after four times the limit.
  std::atomic<bool> done{false};
  Status s;
  std::thread waiter([&] {
    s = tx.wait_ack(1, 50ms);
    done = true;
  });
  std::this_thread::sleep_for(200ms);  // a lower bound on waiting, not an assumption about speed
  ck_assert_msg(!done.load(), "gave up on a backup that is heard: %s", s.message().c_str());
  ch.last_beat = std::chrono::steady_clock::now();
  ch.beating = false;  // falls silent: lost after the limit
  waiter.join();
  ck_assert_msg(has(s, "was silent for 50 ms"), "%s", s.message().c_str());
}
END_TEST

// The primary goes on without the backup only once the backup confirmed
// (Bye) that it stands down: the receiver says so (with the reason) and
// drops what it staged.
START_TEST(receiver_reports_stand_down) {
  Pipe pipe;
  FakeChannel prim(pipe, true), back(pipe, false);
  std::vector<std::uint8_t> guest(16 * kPage, 7);
  back.expose(guest.data(), guest.size());
  ImageStore st(kPage, 16);
  Lease lease(1s, Lease::Clock::now());
  CheckpointReceiver rx(back, st, lease);
  CheckpointSender tx(prim, 16);
  ck_assert(tx.begin(1).ok());
  Status unanswered = tx.stand_down("timeout: backup did not acknowledge checkpoint 1", 20ms);
  ck_assert_msg(!unanswered.ok() && Channel::timed_out(unanswered), "%s", unanswered.message().c_str());
  auto r = drain(rx);
  ck_assert_msg(r.ok(), "%s", r.status().message().c_str());
  ck_assert(r.value().event == CheckpointReceiver::Event::kStandDown);
  ck_assert_str_eq(r.value().reason.c_str(), "timeout: backup did not acknowledge checkpoint 1");
  ck_assert_uint_eq(st.staging_epoch(), 0);
  ck_assert_uint_eq(st.committed_epoch(), 0);
  ck_assert(back.send(ByeMsg{}.to_frame()).ok());  // what vmha backup answers (backup_service.cc)
  ck_assert(tx.stand_down("timeout: backup did not acknowledge checkpoint 1", 1000ms).ok());
}
END_TEST

// Time the backup spends handling a message (a slow read) is not the
// primary's silence: the lease hears the primary again once it is handled.
START_TEST(receiver_hears_primary_after_a_slow_read) {
  struct SlowChannel final : public Channel {
    explicit SlowChannel(FakeChannel& c) : inner(c) {}
    Status send_encoded(std::span<const std::uint8_t> b) override { return inner.send_encoded(b); }
    Result<Frame> receive(std::chrono::milliseconds t) override { return inner.receive(t); }
    Status pull(std::span<const PullOp> ops) override {
      std::this_thread::sleep_for(60ms);
      return inner.pull(ops);
    }
    const std::vector<RegionInfo>& remote_regions() const override { return inner.remote_regions(); }
    bool connected() const override { return true; }
    std::string peer() const override { return "slow"; }
    void close() override {}
    FakeChannel& inner;
  };
  Pipe pipe;
  FakeChannel prim(pipe, true), back(pipe, false);
  std::vector<std::uint8_t> guest(16 * kPage, 7);
  back.expose(guest.data(), guest.size());
  SlowChannel slow(back);
  ImageStore st(kPage, 16);
  Lease lease(1s, Lease::Clock::now());
  CheckpointReceiver rx(slow, st, lease);
  CheckpointSender tx(prim, 16);
  ck_assert(tx.begin(1).ok());
  ck_assert(rx.step(0ms).ok());
  std::vector<PageRef> p{{3, 3 * kPage}};
  ck_assert(tx.send_pages(0, p).ok());
  auto before = Lease::Clock::now();
  ck_assert(rx.step(0ms).ok());
  // Heard no earlier than the end of the 60 ms read.
  ck_assert(lease.silence(before + 60ms) <= Lease::Clock::duration::zero());
}
END_TEST

START_TEST(receiver_rejects_torn_pages_and_protocol_errors) {
  const std::uint64_t pages = 16;
  std::vector<std::uint8_t> guest(pages * kPage, 1);
  for (int c = 0; c < 4; ++c) {
    Pipe pipe;
    FakeChannel prim(pipe, true), back(pipe, false);
    back.expose(guest.data(), guest.size());
    ImageStore st(kPage, pages);
    Lease lease(1s, Lease::Clock::now());
    CheckpointReceiver rx(back, st, lease);
    CheckpointSender tx(prim, pages);
    ck_assert(tx.begin(1).ok());
    const char* why = "";
    if (c == 0) {  // checksum taken before the page changed: a torn read
      std::vector<PageRef> p{{2, 2 * kPage}};
      std::vector<std::uint32_t> crc{crc32c(0, &guest[2 * kPage], kPage) ^ 1};
      ck_assert(tx.send_pages(0, p, crc).ok());
      why = "page 2 read from the primary does not match its checksum";
    } else if (c == 1) {  // page outside the image
      (void)prim.send(PageListMsg{1, 1, 0, 0, {{99, 0}}, {}}.to_frame());
      why = "page 99 is outside the guest image";
    } else if (c == 2) {  // page list of another epoch
      (void)prim.send(PageListMsg{7, 1, 0, 0, {{1, 0}}, {}}.to_frame());
      why = "PageList for checkpoint 7 while receiving 1";
    } else {  // a message the backup never expects
      (void)prim.send(AckMsg{1}.to_frame());
      why = "unexpected Ack message from the primary";
    }
    auto r = drain(rx);
    ck_assert_msg(!r.ok() && has(r.status(), why), "case %d: %s", c, r.status().message().c_str());
    ck_assert_uint_eq(st.committed_epoch(), 0);
    ck_assert_uint_eq(st.staging_epoch(), 0);  // the partial checkpoint was discarded
    // The primary is told why.
    auto reply = prim.receive(0ms);
    ck_assert(reply.ok() && reply.value().type == MessageType::kError);
  }
}
END_TEST

int main() {
  Suite* s = suite_create("vmha_backup");
  TCase* tc = tcase_create("store");
  tcase_set_timeout(tc, 60);  // Check's default, 4 s, fails on a loaded host
  tcase_add_test(tc, store_commits_atomically_and_resyncs);
  tcase_add_test(tc, store_never_commits_a_partial_checkpoint);
  tcase_add_test(tc, store_on_caller_memory);
  tcase_add_test(tc, store_zero_pages);
  tcase_add_test(tc, store_fresh_pages_in_image);
  tcase_add_test(tc, store_rejects_bad_requests);
  tcase_add_test(tc, lease_needs_both_loss_and_silence);
  tcase_add_test(tc, receiver_commits_what_sender_sends);
  tcase_add_test(tc, receiver_rejects_torn_pages_and_protocol_errors);
  tcase_add_test(tc, sender_sends_heartbeats_while_waiting);
  tcase_add_test(tc, a_backup_heard_on_its_liveness_path_is_waited_for);
  tcase_add_test(tc, receiver_reports_stand_down);
  tcase_add_test(tc, receiver_hears_primary_after_a_slow_read);
  suite_add_tcase(s, tc);
  SRunner* sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed == 0 ? 0 : 1;
}
