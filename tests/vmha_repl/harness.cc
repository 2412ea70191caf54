#include "tests/vmha_repl/harness.h"

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <thread>

#include "vmha/backup/image_store.h"
#include "vmha/backup/lease.h"
#include "vmha/checkpoint/checkpoint_receiver.h"
#include "vmha/checkpoint/checkpoint_sender.h"
#include "vmha/protocol/crc32c.h"
#include "vmha/protocol/wire_io.h"
#include "vmha/transport/ucx_transport.h"

namespace vmha::test {
namespace {

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;
constexpr std::size_t kPage = 4096;

// Shared between the three processes (MAP_SHARED before fork).
struct Shared {
  char address[128];
  std::atomic<int> address_ready;
  std::atomic<int> backup_done;  // the backup left its receive loop (Bye or an error)
  char backup_error[2048];
  char primary_error[2048];
  std::uint64_t commits, committed_epoch, crc_mismatches, prefetched, residual;
  int compared, matches, lease_before, lease_after;
  double pause_p50_ms, pause_max_ms;
  std::uint64_t snapshot_epoch;
  // followed by the primary's snapshot (pages * kPage bytes)
};

void record(char* where, const std::string& what) {
  if (where[0] == 0) std::snprintf(where, 2048, "%s", what.c_str());
}

// Like `ip netns exec`: join the network namespace, then remount /sys in a
// private mount namespace. UCX lists network devices from /sys/class/net; with
// the host's /sys (plain setns / nsenter --net) it sees the host's devices and
// every connection fails with "Destination is unreachable".
bool enter_netns(const std::string& name, char* error) {
  if (name.empty()) return true;
  std::string path = "/run/netns/" + name;
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0 || ::setns(fd, CLONE_NEWNET) != 0) {
    record(error, "cannot enter network namespace " + path + ": " + std::strerror(errno));
    if (fd >= 0) ::close(fd);
    return false;
  }
  ::close(fd);
  if (::unshare(CLONE_NEWNS) != 0 || ::mount("", "/", nullptr, MS_SLAVE | MS_REC, nullptr) != 0 ||
      ::umount2("/sys", MNT_DETACH) != 0 || ::mount(name.c_str(), "/sys", "sysfs", 0, nullptr) != 0) {
    record(error, "cannot remount /sys inside network namespace " + name + ": " + std::strerror(errno));
    return false;
  }
  return true;
}

std::vector<std::uint8_t> job_key() { return std::vector<std::uint8_t>(32, 0x5a); }

// An authenticator that speaks another method (to test refusal).
class OtherMethod final : public Authenticator {
 public:
  std::string method() const override { return "plaintext-please"; }
  Result<std::vector<std::uint8_t>> prove(std::string_view, std::span<const std::uint8_t>) const override {
    return std::vector<std::uint8_t>(32, 0);
  }
  Status verify(std::string_view, std::span<const std::uint8_t>, std::span<const std::uint8_t>) const override {
    return {};
  }
};

// ---------------------------------------------------------------- backup ---

int backup_main(const HarnessConfig& cfg, Shared* sh, const std::uint8_t* snapshot) {
  if (!enter_netns(cfg.backup_netns, sh->backup_error)) return 3;
  UcxOptions opt;
  opt.transports = cfg.transports;
  opt.network_address = cfg.listen;
  auto t = make_ucx_transport(opt);
  if (!t.ok()) return record(sh->backup_error, t.status().message()), 3;
  if (Status s = t.value()->listen(cfg.listen); !s.ok()) return record(sh->backup_error, s.message()), 3;
  std::snprintf(sh->address, sizeof sh->address, "%s", t.value()->listen_address().c_str());
  sh->address_ready = 1;
  auto auth = SharedKeyAuthenticator::from_key(job_key());
  auto ch = t.value()->accept(*auth.value(), 20s);
  if (!ch.ok()) return record(sh->backup_error, ch.status().message()), 0;

  // The image and the slots checkpoints are read into live in memory
  // registered with the backup's transport.
  auto image_a = t.value()->allocate_region(cfg.pages * kPage);
  auto image_b = t.value()->allocate_region(cfg.pages * kPage);
  if (!image_a.ok() || !image_b.ok()) return record(sh->backup_error, "cannot allocate the images"), 3;
  std::span<std::uint8_t> a(static_cast<std::uint8_t*>(image_a.value().base), cfg.pages * kPage);
  std::span<std::uint8_t> b(static_cast<std::uint8_t*>(image_b.value().base), cfg.pages * kPage);
  std::memset(a.data(), 0, a.size());
  std::memset(b.data(), 0, b.size());
  ImageStore store(kPage, cfg.pages, a, b);
  Lease lease(500ms, Clock::now());
  lease.connection_up(Clock::now());
  CheckpointReceiver rx(*ch.value(), store, lease);
  auto deadline = Clock::now() + std::chrono::seconds(cfg.time_limit_s);
  while (Clock::now() < deadline) {
    auto step = rx.step(100ms);
    if (!step.ok()) {
      record(sh->backup_error, step.status().message());
      break;
    }
    if (step.value().event == CheckpointReceiver::Event::kBye) break;
    if (step.value().event != CheckpointReceiver::Event::kCommitted) continue;
    ++sh->commits;
    store.read_committed([&](const CommittedImage& img) {
      WireReader r(img.state);
      std::uint64_t epoch = r.u64("epoch");
      std::uint32_t crc = r.u32("memory crc");
      if (!r.ok() || epoch != img.epoch || crc32c(img.memory) != crc) ++sh->crc_mismatches;
    });
  }
  sh->backup_done = 1;
  if (cfg.fault == Fault::kKillPrimary) {
    // The connection is gone; the primary is lost only once the lease expires.
    // The lease takes the time as an argument: ask it at the last instant of
    // the lease and just after, whatever time this host took to get here.
    auto now = Clock::now();
    auto last_heard = now - lease.silence(now);
    sh->lease_before = !lease.connected() && !lease.peer_lost(last_heard + lease.length()) ? 1 : 0;
    sh->lease_after = lease.peer_lost(last_heard + lease.length() + 1ms) ? 1 : 0;
  }
  sh->committed_epoch = store.committed_epoch();
  if (sh->snapshot_epoch != 0 && sh->snapshot_epoch == sh->committed_epoch) {
    sh->compared = 1;
    store.read_committed([&](const CommittedImage& img) {
      sh->matches = std::memcmp(img.memory.data(), snapshot, img.memory.size()) == 0;
    });
  }
  ch.value()->close();
  return 0;
}

// --------------------------------------------------------------- primary ---

struct Guest {
  std::uint8_t* memory;
  std::uint64_t pages;
  std::vector<std::atomic<std::uint64_t>> dirty;  // "dirty ring": bit per page
  std::atomic<bool> stop{false};
  std::atomic<bool> pause{false};
  std::atomic<bool> paused{false};
  std::atomic<std::uint64_t> steps{0};

  Guest(std::uint8_t* m, std::uint64_t n) : memory(m), pages(n), dirty((n + 63) / 64) {}

  // Writes a whole page, then marks it dirty (like a write fault logging it):
  // any write is followed by a mark, so a harvest after the mark catches it.
  void writer(int pause_every) {
    std::uint64_t s = 0;
    auto deadline = Clock::now() + 120s;
    while (!stop && Clock::now() < deadline) {
      if (pause) {
        paused = true;
        while (pause && !stop && Clock::now() < deadline) std::this_thread::sleep_for(20us);
        paused = false;
        continue;
      }
      std::uint64_t p = (s * 2654435761u) % pages;
      auto* w = reinterpret_cast<std::uint64_t*>(memory + p * kPage);
      std::uint64_t v = (s + 1) * 0x9E3779B97F4A7C15ull ^ (p << 32);
      for (std::size_t i = 0; i < kPage / 8; ++i) w[i] = v + i;
      dirty[p / 64].fetch_or(std::uint64_t{1} << (p % 64), std::memory_order_release);
      ++s;
      steps = s;
      if (pause_every > 0 && s % static_cast<std::uint64_t>(pause_every) == 0) std::this_thread::sleep_for(50us);
    }
  }

  std::vector<PageRef> harvest() {
    std::vector<PageRef> out;
    for (std::size_t w = 0; w < dirty.size(); ++w) {
      std::uint64_t bits = dirty[w].exchange(0, std::memory_order_acq_rel);
      while (bits) {
        int b = __builtin_ctzll(bits);
        bits &= bits - 1;
        std::uint64_t p = w * 64 + static_cast<std::uint64_t>(b);
        out.push_back(PageRef{p, p * kPage});
      }
    }
    return out;
  }

  bool pause_writer() {
    pause = true;
    auto deadline = Clock::now() + 5s;
    while (!paused && Clock::now() < deadline) std::this_thread::sleep_for(10us);
    return paused;
  }
};

// Until the backup has left its receive loop (false after `limit`).
bool wait_backup_done(const Shared* sh, Clock::duration limit) {
  auto deadline = Clock::now() + limit;
  while (!sh->backup_done && Clock::now() < deadline) std::this_thread::sleep_for(1ms);
  return sh->backup_done != 0;
}

int primary_fail(Shared* sh, const std::string& what) {
  record(sh->primary_error, what);
  return 2;
}

int primary_main(const HarnessConfig& cfg, Shared* sh, std::uint8_t* snapshot) {
  if (!enter_netns(cfg.primary_netns, sh->primary_error)) return 3;
  UcxOptions opt;
  opt.transports = cfg.transports;
  opt.network_address = cfg.listen;
  auto t = make_ucx_transport(opt);
  if (!t.ok()) return primary_fail(sh, t.status().message());
  auto region = t.value()->allocate_region(cfg.pages * kPage);
  if (!region.ok()) return primary_fail(sh, region.status().message());
  std::memset(region.value().base, 0, cfg.pages * kPage);

  std::unique_ptr<Authenticator> auth;
  if (cfg.fault == Fault::kWrongMethod) {
    auth = std::make_unique<OtherMethod>();
  } else {
    auto key = job_key();
    if (cfg.fault == Fault::kWrongKey) key[0] ^= 1;
    auth = SharedKeyAuthenticator::from_key(key).take();
  }
  auto ch = t.value()->connect(sh->address, *auth, 10s);
  if (!ch.ok()) return primary_fail(sh, ch.status().message());
  Channel& channel = *ch.value();
  CheckpointSender tx(channel, cfg.pages);

  Guest guest(static_cast<std::uint8_t*>(region.value().base), cfg.pages);
  std::thread writer([&] { guest.writer(cfg.writer_pause_every); });
  std::vector<double> pauses;
  int rc = 0;
  for (int e = 1; e <= cfg.epochs && rc == 0; ++e) {
    std::uint64_t epoch = static_cast<std::uint64_t>(e);
    if (Status s = tx.begin(epoch); !s.ok()) {
      rc = primary_fail(sh, s.message());
      break;
    }
    // Prefetch: harvest every 2 ms and let the backup pull while the guest runs.
    std::atomic<bool> epoch_over{false};
    std::atomic<int> prefetch_rounds{0};
    std::string prefetch_error;
    std::thread prefetch([&] {
      for (; !epoch_over; ++prefetch_rounds) {
        auto pages = guest.harvest();
        if (!pages.empty()) {
          if (Status s = tx.send_pages(region.value().id, pages); !s.ok()) {
            prefetch_error = s.message();
            prefetch_rounds = 1 << 30;  // nothing more to wait for
            return;
          }
          sh->prefetched += pages.size();
        }
        std::this_thread::sleep_for(2ms);
      }
    });
    // The guest runs for an epoch: its length is the behaviour, not a wait.
    // It also lasts until the prefetch thread has harvested twice, so that a
    // loaded host that starves that thread still prefetches in every epoch.
    std::this_thread::sleep_for(std::chrono::milliseconds(cfg.epoch_ms));
    for (auto until = Clock::now() + 10s; prefetch_rounds < 2 && Clock::now() < until;)
      std::this_thread::sleep_for(1ms);
    epoch_over = true;
    prefetch.join();
    if (!prefetch_error.empty()) {
      rc = primary_fail(sh, prefetch_error);
      break;
    }

    auto t0 = Clock::now();
    if (!guest.pause_writer()) {
      rc = primary_fail(sh, "writer did not pause");
      break;
    }
    auto residual = guest.harvest();
    std::vector<std::uint32_t> crcs;
    for (const auto& p : residual) crcs.push_back(crc32c(0, guest.memory + p.offset, kPage));
    std::uint32_t seq = 0;
    Status s = tx.send_pages(region.value().id, residual, crcs, true, &seq);
    if (s.ok()) s = tx.wait_pulled(seq, 10s);
    if (!s.ok()) {
      rc = primary_fail(sh, s.message());
      break;
    }
    sh->residual += residual.size();
    // Test-only verification data, not counted in the pause.
    auto t_check = Clock::now();
    std::memcpy(snapshot, guest.memory, cfg.pages * kPage);
    sh->snapshot_epoch = epoch;
    WireWriter state;
    state.u64(epoch);
    state.u32(crc32c(0, guest.memory, cfg.pages * kPage));
    t0 += Clock::now() - t_check;
    state.u64(guest.steps.load());
    if (cfg.fault == Fault::kBadCounts && e == 2) {
      // End claims one page more than was sent: the backup must refuse.
      (void)tx.send_state(state.data());
      EndMsg bad{epoch, tx.distinct_pages() + 1, tx.page_lists(), static_cast<std::uint32_t>(state.data().size()),
                 crc32c(state.data())};
      (void)channel.send(bad.to_frame());
      guest.pause = false;
      s = tx.wait_ack(epoch, 5s);
      record(sh->primary_error, s.ok() ? "backup acknowledged a bad checkpoint" : s.message());
      break;
    }
    if (s = tx.send_state(state.data()); s.ok()) s = tx.end();
    guest.pause = false;  // the guest resumes before the acknowledgement arrives
    pauses.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
    if (s.ok()) s = tx.wait_ack(epoch, 10s);
    if (!s.ok()) {
      rc = primary_fail(sh, s.message());
      break;
    }

    if (e == 1 && cfg.fault != Fault::kNone && cfg.fault != Fault::kBadCounts) {
      guest.stop = true;
      writer.join();
      (void)tx.begin(2);
      // Once the backup says it read these pages, it is in the middle of
      // checkpoint 2: the fault below meets it there.
      std::vector<PageRef> some{{0, 0}, {1, kPage}};
      std::uint32_t seq = 0;
      if (tx.send_pages(region.value().id, some, {}, true, &seq).ok()) (void)tx.wait_pulled(seq, 10s);
      auto bytes = encode_frame(StateMsg{2, std::vector<std::uint8_t>(1000, 7)}.to_frame());
      if (cfg.fault == Fault::kCorruptFrame) {
        bytes[kFrameHeaderSize + 500] ^= 0x10;
        (void)channel.send_encoded(bytes);
        (void)wait_backup_done(sh, 10s);  // it rejected the frame and stopped
      } else if (cfg.fault == Fault::kTruncatedFrame) {
        (void)channel.send_encoded(std::span<const std::uint8_t>(bytes).first(bytes.size() / 2));
        // The backup cannot finish reading half a frame while we are here:
        // close, which flushes what we sent to the backup before it goes.
        channel.close();
      } else if (cfg.fault == Fault::kKillPrimary) {
        ::raise(SIGKILL);
      }
      ::_exit(0);  // leave without an orderly close, like a crash
    }
  }
  guest.stop = true;
  if (writer.joinable()) writer.join();
  if (!pauses.empty()) {
    std::sort(pauses.begin(), pauses.end());
    sh->pause_p50_ms = pauses[pauses.size() / 2];
    sh->pause_max_ms = pauses.back();
  }
  // After Bye, the backup compares its image and leaves: close once it has.
  if (rc == 0 && channel.send(ByeMsg{}.to_frame()).ok()) (void)wait_backup_done(sh, 10s);
  channel.close();
  return rc;
}

int wait_bounded(pid_t pid, Clock::time_point deadline) {
  int status = -1;
  while (Clock::now() < deadline) {
    pid_t r = ::waitpid(pid, &status, WNOHANG);
    if (r == pid) return status;
    std::this_thread::sleep_for(5ms);
  }
  ::kill(pid, SIGKILL);
  ::waitpid(pid, &status, 0);
  return status;
}

}  // namespace

HarnessResult run_harness(const HarnessConfig& cfg) {
  HarnessResult r;
  std::size_t bytes = sizeof(Shared) + cfg.pages * kPage;
  void* area = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (area == MAP_FAILED) {
    r.backup_error = "harness: cannot map shared memory";
    return r;
  }
  auto* sh = new (area) Shared{};
  auto* snapshot = static_cast<std::uint8_t*>(area) + sizeof(Shared);
  auto deadline = Clock::now() + std::chrono::seconds(cfg.time_limit_s + 10);

  std::fflush(nullptr);
  pid_t backup = ::fork();
  if (backup == 0) ::_exit(backup_main(cfg, sh, snapshot));
  while (!sh->address_ready && Clock::now() < deadline && ::waitpid(backup, &r.backup_status, WNOHANG) == 0)
    std::this_thread::sleep_for(2ms);
  if (!sh->address_ready) {
    r.backup_status = wait_bounded(backup, Clock::now() + 1s);
    r.backup_error = sh->backup_error[0] ? sh->backup_error : "backup did not start listening";
    ::munmap(area, bytes);
    return r;
  }
  pid_t primary = ::fork();
  if (primary == 0) ::_exit(primary_main(cfg, sh, snapshot));
  r.primary_status = wait_bounded(primary, deadline);
  r.backup_status = wait_bounded(backup, deadline);

  r.backup_error = sh->backup_error;
  r.primary_error = sh->primary_error;
  r.commits = sh->commits;
  r.committed_epoch = sh->committed_epoch;
  r.crc_mismatches = sh->crc_mismatches;
  r.compared_snapshot = sh->compared;
  r.snapshot_matches = sh->matches;
  r.prefetched_pages = sh->prefetched;
  r.residual_pages = sh->residual;
  r.pause_p50_ms = sh->pause_p50_ms;
  r.pause_max_ms = sh->pause_max_ms;
  r.lease_held_before_expiry = sh->lease_before;
  r.lease_lost_after_expiry = sh->lease_after;
  ::munmap(area, bytes);
  return r;
}

std::string describe(const HarnessResult& r) {
  char buf[512];
  std::snprintf(buf, sizeof buf,
                "commits=%llu committed_epoch=%llu crc_mismatches=%llu snapshot=%s prefetched=%llu "
                "residual=%llu pause_p50=%.2fms pause_max=%.2fms primary_status=%d backup_status=%d",
                (unsigned long long)r.commits, (unsigned long long)r.committed_epoch,
                (unsigned long long)r.crc_mismatches,
                r.compared_snapshot ? (r.snapshot_matches ? "equal" : "DIFFERENT") : "not compared",
                (unsigned long long)r.prefetched_pages, (unsigned long long)r.residual_pages, r.pause_p50_ms,
                r.pause_max_ms, r.primary_status, r.backup_status);
  std::string s = buf;
  if (!r.backup_error.empty()) s += "\n  backup: " + r.backup_error;
  if (!r.primary_error.empty()) s += "\n  primary: " + r.primary_error;
  return s;
}

}  // namespace vmha::test
