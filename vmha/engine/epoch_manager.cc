#include "vmha/engine/epoch_manager.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <exception>
#include <span>
#include <system_error>
#include <thread>

#include "vmha/checkpoint/checkpoint_sender.h"
#include "vmha/engine/epoch_state.h"
#include "vmha/output/held_output.h"
#include "vmha/protocol/crc32c.h"
#include "vmha/track/hot_tracker.h"
#include "vmha/transport/ucx_transport.h"
#include "vmha/vmm/exec_resolve.h"

extern char** environ;

namespace vmha {

namespace {

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;
constexpr uint64_t kPage = 4096;
// Without PML every page the guest writes after a harvest faults once
// (~7.5 us idle, 12-25 us on a loaded host): the hidden cost of a checkpoint.
constexpr double kFaultMsPerPage = 0.010;
// An epoch ended early for waiting output lasts at least as long as the last
// checkpoint cost, so checkpoints take at most about half the time. Measured
// on steps (bench, 50 ms epochs): factor 1 gave 7.4 ms output latency at about
// the guest time of factor 4 (20 ms); factor 0 made the guest 3x slower.
constexpr double kEarlyEndCostFactor = 1.0;
constexpr uint64_t kStagingBytes = 64ull << 20;  // room for 16384 residual pages
constexpr uint64_t kPreCopyPages = 256;          // pre-copy when the last checkpoint had this many
// Pages read by the backup per confirmed list: one list of sort's 57,000
// pages took over the 2.5 s confirmation limit on a loaded host.
constexpr size_t kPullChunkPages = 4096;

// Whether a 4 KiB page holds only zeros; most pages with data say so in
// their first bytes.
bool page_is_zero(const uint8_t* page) {
  const auto* w = reinterpret_cast<const uint64_t*>(page);
  if (w[0] | w[kPage / 8 - 1]) return false;
  for (size_t i = 0; i < kPage / 8; i += 16) {
    uint64_t acc = 0;
    for (size_t k = 0; k < 16; ++k) acc |= w[i + k];
    if (acc) return false;
  }
  return true;
}

double ms_since(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }

RunResult failed(const std::string& why) {
  RunResult r;
  r.end = RunResult::End::kFailed;
  r.message = why;
  return r;
}

class Primary {
 public:
  Primary(const EngineOptions& eo, Vm& vm, HeldOutputSink& sink, Channel& ch, uint32_t region, LocalRegion staging,
          EngineStats& stats, Clock::time_point started)
      : eo_(eo),
        vm_(vm),
        sink_(sink),
        ch_(ch),
        tx_(ch, vm.memory().size() / kPage),
        region_(region),
        staging_(staging),
        stats_(stats),
        started_(started) {
    tx_.set_heartbeat_every(std::chrono::milliseconds(std::max(1, eo_.lease_ms / 2)));
    streams_[1] = describe_stream(1);
    streams_[2] = describe_stream(2);
    // A checkpoint may name a file the guest removes later: keep it (sys/removed_files.h).
    vm_.processes().removed().keep(true, vm_.process().root);
    // A takeover undoes the file-system changes made after its checkpoint
    // (output/undo_log.h): journal them beside the run's private directories.
    if (Status s = sink_.undo_log().open(vm_.process().root.root_fd(), run_state_dir(vm_.process().root.run_id()));
        !s.ok() && !eo_.quiet)
      std::fprintf(stderr, "vmha: %s: a takeover will not undo file-system changes\n", s.message().c_str());
  }

  RunResult run() {
    // Checkpoint 1 holds the loaded program before it runs, so the backup
    // always has an image to resume from.
    if (Status s = tx_.begin(1); !s.ok()) return failed("backup: " + s.message());
    if (Status s = end_epoch(1, false, {}); !s.ok()) return failed("backup: first checkpoint: " + s.message());

    RunResult result;
    auto guest_start = Clock::now(), guest_end = guest_start;
    stats_.startup_s = std::chrono::duration<double>(guest_start - started_).count();
    std::thread vcpu;
    try {
      vcpu = std::thread([&] {
        result = vm_.run();  // catches what its loop throws
        guest_end = Clock::now();
        timespec cpu{};
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu);
        stats_.guest_cpu_s =
            static_cast<double>(cpu.tv_sec) + static_cast<double>(cpu.tv_nsec) * 1e-9 + vm_.helper_cpu_seconds();
        done_ = true;
      });
    } catch (const std::system_error& e) {
      ch_.close();
      return failed(std::string("cannot start the vCPU thread: ") + e.what());
    }
    // An exception here must not leave `vcpu` joinable (std::terminate, i.e.
    // SIGABRT, which the SPANK plugin takes for a kill and fails over): stop
    // the guest, join, and fail the run like any other VMM error.
    try {
      for (uint64_t epoch = 2;; ++epoch) {
        if (!lost_) {
          if (Status s = tx_.begin(epoch); !s.ok()) lose(s);
        }
        if (stopping_) return stop_after_loss(vcpu);
        run_epoch();
        if (close_epoch(epoch, result)) break;
        if (stopping_) return stop_after_loss(vcpu);
      }
    } catch (const std::exception& e) {
      return abandon(vcpu, e.what());
    } catch (...) {
      return abandon(vcpu, "unknown exception");
    }
    vcpu.join();
    stats_.guest_s = std::chrono::duration<double>(guest_end - guest_start).count();
    // The end is acknowledged (or no backup is left): nothing resumes the
    // guest, so the run's own directories go, before Bye (a kill after Bye
    // leaves the backup nothing to take over, and so nobody to remove them).
    vm_.process().root.remove_private();
    if (!lost_) (void)ch_.send(ByeMsg{}.to_frame());
    if (!lost_ || stood_down_) wait_for_backup_to_close();
    ch_.close();
    return result;
  }

 private:
  // The backup is lost and did not stand down: the guest stops where it is
  // (paused or running), its held output is dropped (the backup has every
  // checkpoint whose output went out, and releases the rest if it resumes),
  // and the run fails: a supervisor lets the backup take over.
  RunResult stop_after_loss(std::thread& vcpu) {
    vm_.request_stop();
    vm_.resume();
    vcpu.join();
    ch_.close();
    held_after_loss_.clear();
    (void)sink_.take();
    return failed("backup lost (" + stats_.backup_error + "): the program stopped here; its backup resumes it if it is alive");
  }

  // After an exception in the epoch loop: the guest stops (a paused one is
  // resumed to see the stop), its thread is joined and the run fails. Held
  // output stays unreleased: the backup did not acknowledge it.
  RunResult abandon(std::thread& vcpu, const char* what) {
    vm_.resume();
    vm_.request_stop();
    vcpu.join();
    ch_.close();
    return failed(std::string("internal error: ") + what);
  }

  // The guest runs; this thread keeps the backup's lease alive and, in async
  // mode, prefetches, until the epoch is due to end.
  void run_epoch() {
    auto start = Clock::now();
    auto next_harvest = start;
    // A long epoch sends nothing else: heartbeats every half lease keep
    // the backup from counting a live primary as gone.
    const auto beat_every = std::chrono::milliseconds(std::max(1, eo_.lease_ms / 2));
    auto next_beat = start + beat_every;
    std::vector<uint64_t> pfns;
    while (!done_) {
      double elapsed = ms_since(start);
      if (elapsed >= eo_.epoch_ms) break;
      if (!lost_ && Clock::now() >= next_beat) {
        Status hb = tx_.heartbeat();
        if (hb.ok()) hb = tx_.poll(0ms);  // drain the echoes
        if (!hb.ok()) lose(hb);
        next_beat = Clock::now() + beat_every;
      }
      // The guest waits for file writes held in this epoch (it reads that
      // file or changes the file system): it makes no progress until they
      // are released, so end the epoch now, in both modes.
      if (sink_.release_wanted()) break;
      // Async checkpoints are cheap, so output waiting ends the epoch early
      // (no sooner than its cost allows). Stop-copy keeps fixed epochs
      // (Remus): each of its checkpoints is a long pause.
      if (eo_.async && elapsed >= std::max<double>(eo_.min_epoch_ms, kEarlyEndCostFactor * epoch_cost_ms_) &&
          sink_.waiting())
        break;
      if (eo_.async && eo_.prefetch_ms > 0 && !lost_ && Clock::now() >= next_harvest) {
        prefetch(pfns);
        next_harvest = Clock::now() + std::chrono::milliseconds(eo_.prefetch_ms);
      }
      std::this_thread::sleep_for(200us);
    }
  }

  // Pre-copies, pauses the vCPU and checkpoints the epoch (with the backup
  // lost: only releases its output). True once the guest has finished.
  bool close_epoch(uint64_t epoch, const RunResult& result) {
    double catch_up_ms = 0;
    // Pre-copy while the guest runs, so the pause copies few pages: when
    // the last checkpoint was large or this one already is (copying it at
    // the pause would take over ~0.2 ms) and no output waits (pre-copy
    // delays its release), nor the guest for its held file writes.
    // Each harvest costs the guest a fault per page it keeps writing; a
    // look at the logs costs nothing (sort maps a 230 MB buffer at once
    // after small epochs: without the look, all of it was read paused).
    if (eo_.async && !lost_ && !done_ && !sink_.waiting() && !sink_.release_wanted() &&
        (last_pages_ >= kPreCopyPages || vm_.tracker().pending_pages() >= kPreCopyPages))
      catch_up_ms = catch_up();
    auto t0 = Clock::now();
    vm_.request_pause();
    vm_.wait_paused();
    bool finished = done_.load();
    // Async: more pages than the staging region holds would be read while
    // paused. The guest was inside a syscall that wrote them (the pause
    // waits for it: mmap of a large buffer); resume it, pre-copy them, and
    // pause again.
    for (int retry = 0; eo_.async && !lost_ && !finished && retry < 2 && staging_.base &&
                        vm_.tracker().pending_pages() > staging_.length / kPage;
         ++retry) {
      vm_.resume();
      catch_up_ms += catch_up();
      t0 = Clock::now();
      vm_.request_pause();
      vm_.wait_paused();
      finished = done_.load();
    }
    if (!finished) stats_.stop_ms.push_back(ms_since(t0));
    if (lost_) {
      if (stopping_) return false;  // the caller stops the guest; nothing is released
      if (!finished) vm_.resume();
      release(sink_.take());
      return finished;
    }
    Status s = end_epoch(epoch, finished, result, &t0);
    if (!s.ok()) {
      lose(s);
      if (stopping_) return false;
      if (finished) {
        release(held_after_loss_);
        held_after_loss_.clear();
        release(sink_.take());
      }
      return finished;
    }
    if (!finished) {
      last_pages_ = static_cast<uint64_t>(stats_.pages_per_ckpt.back());
      // Hot pages are reported at every checkpoint but fault no more.
      const double faulting =
          std::max(0.0, stats_.pages_per_ckpt.back() - static_cast<double>(vm_.tracker().hot_pages()));
      epoch_cost_ms_ = catch_up_ms + stats_.pause_ms.back() + kFaultMsPerPage * faulting;
    }
    return finished;
  }

  void prefetch(std::vector<uint64_t>& pfns) {
    pfns.clear();
    if (Status s = vm_.tracker().harvest_running(pfns); !s.ok()) return lose(s);
    if (Status s = send_zero(pfns); !s.ok()) return lose(s);
    if (pfns.empty()) return;
    std::vector<PageRef> refs;
    refs.reserve(pfns.size());
    for (uint64_t p : pfns) refs.push_back(PageRef{p, p * kPage});
    if (Status s = tx_.send_pages(region_, refs); !s.ok()) return lose(s);
    stats_.prefetched_pages += refs.size();
  }

  // Pre-copy before the pause, while the guest still runs: harvest, let the
  // backup read those pages and wait until it has (with prefetch_ms, also
  // everything prefetched before), up to three rounds until few pages are
  // new. The pause then only covers pages written during the last round.
  // Returns how long it took.
  double catch_up() {
    auto t = Clock::now();
    for (int round = 0; round < 3 && !lost_ && !done_; ++round) {
      std::vector<uint64_t> pfns;
      if (Status s = vm_.tracker().harvest_running(pfns); !s.ok()) return lose(s), ms_since(t);
      const size_t found = pfns.size();
      if (Status s = send_zero(pfns); !s.ok()) return lose(s), ms_since(t);
      std::vector<PageRef> refs;
      refs.reserve(pfns.size());
      for (uint64_t p : pfns) refs.push_back(PageRef{p, p * kPage});
      if (Status s = pull_live(refs, {}); !s.ok()) return lose(s), ms_since(t);
      stats_.prefetched_pages += refs.size();
      if (found < 64) break;  // few enough left for the pause
    }
    stats_.catch_up_ms.push_back(ms_since(t));
    return stats_.catch_up_ms.back();
  }

  // The vCPU is paused (or finished). Sends the rest of the checkpoint,
  // resumes the guest, waits for the acknowledgement, releases the output.
  Status end_epoch(uint64_t epoch, bool finished, const RunResult& result, Clock::time_point* paused_at = nullptr) {
    EpochState st;
    Clock::time_point t_state = Clock::now();
    st.epoch = epoch;
    st.released_seq = released_seq_;
    for (int i = 1; i <= 2; ++i) st.streams[i] = streams_[i];
    std::vector<PageRef> staged;  // residual pages copied to the staging region, read after the resume
    if (finished) {
      st.flags |= EpochState::kFinished;
      st.end_kind = static_cast<int32_t>(result.end);
      st.end_code = result.code;
    } else if (Status s = capture_paused(&st, &staged, paused_at, &t_state); !s.ok()) {
      return resume_with(s, finished);
    } else {
      vm_.processes().removed().checkpointed(vm_.processes(), epoch);
    }
    st.held = sink_.take();
    if (!staged.empty()) {  // the rest needs no pause
      vm_.resume();
      note_pause(paused_at, t_state);
    }
    Status s;
    if (!staged.empty()) s = send_staged(staged);
    if (s.ok()) s = tx_.send_state(st.encode());
    uint64_t pages = tx_.distinct_pages();
    if (s.ok()) s = tx_.end();
    if (!finished && staged.empty()) {
      vm_.resume();
      note_pause(paused_at, t_state);
    }
    if (!s.ok()) {
      held_after_loss_ = std::move(st.held);
      return s;
    }
    stats_.pages_per_ckpt.push_back(static_cast<double>(pages));
    ++stats_.epochs;
    s = tx_.wait_ack(epoch, wait_limit());
    if (!s.ok()) {
      held_after_loss_ = std::move(st.held);
      return s;
    }
    release(st.held);
    sink_.undo_log().acknowledged(epoch);
    vm_.processes().removed().acknowledged(epoch, finished, vm_.process().root);
    if (eo_.on_acknowledged) eo_.on_acknowledged(epoch, finished);
    return Status();
  }

  // While paused: the pages dirtied since their last pull (staged or read by
  // the backup in place) and the vCPU/VMM state into st. *t_state: when
  // saving the state began.
  Status capture_paused(EpochState* st, std::vector<PageRef>* staged, Clock::time_point* paused_at,
                        Clock::time_point* t_state) {
    auto t = Clock::now();
    std::vector<uint64_t> pfns;
    if (Status s = vm_.tracker().harvest(pfns); !s.ok()) return s;
    if (paused_at) stats_.harvest_ms.push_back(ms_since(t));
    t = Clock::now();
    if (Status s = send_zero(pfns); !s.ok()) return s;
    if (Status s = send_residual(pfns, staged); !s.ok()) return s;
    stats_.residual_pages += pfns.size();
    if (paused_at) stats_.pull_ms.push_back(ms_since(t));
    *t_state = Clock::now();
    return vm_.save(&st->vm_state, false);
  }

  Status send_residual(const std::vector<uint64_t>& pfns, std::vector<PageRef>* staged) {
    if (eo_.async && staging_.base && pfns.size() <= staging_.length / kPage) {
      // Async: copy the residual pages aside; the guest resumes before the
      // backup reads them (the copy stays put until this epoch is acked).
      staged->reserve(pfns.size());
      for (uint64_t p : pfns) {
        uint64_t at = staged->size() * kPage;
        std::memcpy(static_cast<uint8_t*>(staging_.base) + at, vm_.memory().host(p * kPage), kPage);
        staged->push_back(PageRef{p, at});
      }
      return Status();
    }
    if (pfns.empty()) return Status();
    // Stop-copy (or no room to stage): the backup reads the live pages
    // while the guest stays paused.
    std::vector<PageRef> refs;
    std::vector<uint32_t> crcs;
    refs.reserve(pfns.size());
    crcs.reserve(pfns.size());
    for (uint64_t p : pfns) {
      refs.push_back(PageRef{p, p * kPage});
      crcs.push_back(crc32c(0, vm_.memory().host(p * kPage), kPage));
    }
    return pull_live(refs, crcs);
  }

  // The backup reads these guest pages in place (crcs: none, or one per
  // page); returns once it has, a list of at most kPullChunkPages at a time.
  Status pull_live(std::span<const PageRef> refs, std::span<const uint32_t> crcs) {
    for (size_t at = 0; at < refs.size(); at += kPullChunkPages) {
      size_t n = std::min(refs.size() - at, kPullChunkPages);
      uint32_t seq = 0;
      Status s = tx_.send_pages(region_, refs.subspan(at, n), crcs.empty() ? crcs : crcs.subspan(at, n), true, &seq);
      if (s.ok()) s = tx_.wait_pulled(seq, wait_limit());
      if (!s.ok()) return s;
    }
    return Status();
  }

  // Pages of `pfns` that hold only zeros go to the backup as numbers (it
  // reads nothing: a guest's fresh mapping of gigabytes arrives as zero
  // frames the VMM wrote); the others stay in `pfns`. A zero page written
  // after the check is dirty again and goes in a later list, which wins.
  Status send_zero(std::vector<uint64_t>& pfns) {
    std::vector<uint64_t> zeros;
    size_t keep = 0;
    for (uint64_t p : pfns) {
      if (page_is_zero(vm_.memory().host(p * kPage)))
        zeros.push_back(p);
      else
        pfns[keep++] = p;
    }
    pfns.resize(keep);
    stats_.zero_pages += zeros.size();
    return tx_.send_zero_pages(zeros);
  }

  // The staged residual pages, with their CRCs, for the backup to read.
  Status send_staged(const std::vector<PageRef>& staged) {
    std::vector<uint32_t> crcs;
    crcs.reserve(staged.size());
    for (const PageRef& r : staged) crcs.push_back(crc32c(0, static_cast<uint8_t*>(staging_.base) + r.offset, kPage));
    return tx_.send_pages(staging_.id, staged, crcs);
  }

  // The last word to the backup (Bye, or StandDown) must be read before this
  // side closes: closing with the backup's replies unread resets the
  // connection, and a reset drops what the backup had not read yet (a backup
  // that lost StandDown that way tried to take over). The backup closes as
  // soon as it has read it; one still working through a backlog answers
  // meanwhile, so wait until it closes or stays silent one silence limit.
  void wait_for_backup_to_close() {
    auto start = Clock::now();
    while (Clock::now() < std::max(start, tx_.last_heard()) + wait_limit())
      if (!tx_.poll(50ms).ok()) return;  // closed by the backup (or refused): all read
  }

  // How long to wait for the backup's answer: as long as the backup waits
  // for the primary (both hear heartbeats meanwhile); checkpoint 1 gets the
  // start-up limit.
  std::chrono::milliseconds wait_limit() const {
    const bool started_up = tx_.acked_epoch() >= 1;
    return std::chrono::milliseconds(started_up ? silence_limit_ms(eo_.lease_ms) : startup_limit_ms(eo_.lease_ms));
  }

  void note_pause(Clock::time_point* paused_at, Clock::time_point state_started) {
    if (!paused_at) return;
    stats_.pause_ms.push_back(ms_since(*paused_at));
    stats_.state_ms.push_back(ms_since(state_started));
  }

  Status resume_with(Status s, bool finished) {
    if (!finished) vm_.resume();
    return s;
  }

  void release(const std::vector<OutputRecord>& records) {
    auto now = Clock::now();
    for (const auto& r : records) {
      if (r.is_file()) {
        if (!sink_.release_file(r))
          std::fprintf(stderr, "vmha: writing held output to %s at offset %llu: %s\n", r.path.c_str(),
                       static_cast<unsigned long long>(r.stream_pos), std::strerror(errno));
      } else {
        (void)write_fully(r.stream, r.bytes.data(), r.bytes.size());
        streams_[r.stream].released += r.bytes.size();
      }
      released_seq_ = r.seq;
      stats_.output_latency_ms.push_back(std::chrono::duration<double, std::milli>(now - r.at).count());
    }
  }

  // Split-brain rule: a primary that cannot reach its backup stops releasing
  // output; it goes on alone only after the lease has run out (a backup that
  // takes over must fence this primary first, so it is not running then).
  // A backup still connected (only slow) is told to stand down before any
  // output past its image is released, so it never resumes that image.
  void lose(const Status& why) {
    if (lost_) return;
    lost_ = true;
    stats_.backup_lost = true;
    stats_.backup_error = why.message();
    // Going on alone is safe only once the backup said it will never take
    // over (StandDown answered): it may be alive and only slow.
    Status stood = eo_.continue_after_loss ? tx_.stand_down(why.message(), wait_limit())
                                           : Status::error("--on-backup-loss stop");
    stood_down_ = stood.ok();
    if (!stood_down_) {
      stopping_ = true;
      stats_.stopped = true;
      if (!eo_.quiet)
        std::fprintf(stderr,
                     "vmha: backup lost (%s); stopping the program and releasing nothing more (%s): the backup "
                     "resumes it from its last checkpoint if it is alive\n",
                     why.message().c_str(), stood.message().c_str());
      return;
    }
    stats_.unprotected = true;
    if (!eo_.quiet)
      std::fprintf(stderr, "vmha: backup lost (%s); it stood down: continuing UNPROTECTED\n", why.message().c_str());
    release(held_after_loss_);
    held_after_loss_.clear();
    vm_.processes().removed().keep(false, vm_.process().root);  // no backup will resume
    sink_.undo_log().close();
  }

  const EngineOptions& eo_;
  Vm& vm_;
  HeldOutputSink& sink_;
  Channel& ch_;
  CheckpointSender tx_;
  uint32_t region_;
  LocalRegion staging_;  // async: residual pages are copied here while paused
  EngineStats& stats_;
  StreamInfo streams_[3];
  uint64_t released_seq_ = 0;
  bool stood_down_ = false;  // the backup confirmed it will not take over
  bool lost_ = false;
  bool stopping_ = false;    // lost, not stood down: the guest stops, nothing more is released
  std::atomic<bool> done_{false};  // the guest has ended
  double epoch_cost_ms_ = 0;       // the last checkpoint: catch-up + pause + faults it causes
  // Pages in the last checkpoint. The first epoch counts as large: programs
  // fill their memory as they start, and without a pre-copy those pages were
  // copied at the pause (matmul: 8,164 pages, 50-60 ms).
  uint64_t last_pages_ = kPreCopyPages;
  Clock::time_point started_;
  std::vector<OutputRecord> held_after_loss_;
};

}  // namespace

ProtectedRun run_protected(const EngineOptions& eo, VmOptions vo, const std::vector<std::string>& argv) {
  auto started = Clock::now();
  ProtectedRun out;
  if (argv.empty()) return out.result = failed("run: no program given"), out;
  ExecPlan plan;
  const char* path_env = std::getenv("PATH");
  if (Status s = resolve_exec(argv, path_env ? path_env : "", &plan); !s.ok())
    return out.result = failed(s.message()), out;
  ElfImage image;
  if (Status s = read_elf_file(plan.path, &image); !s.ok()) return out.result = failed(s.message()), out;
  auto auth = SharedKeyAuthenticator::from_file(eo.key_file);
  if (!auth.ok()) return out.result = failed(auth.status().message()), out;
  UcxOptions uo;
  uo.transports = eo.transports;
  uo.network_address = eo.backup;  // UCX may use only the interface toward the backup
  auto t = make_ucx_transport(uo);
  if (!t.ok()) return out.result = failed(t.status().message()), out;
  vo.memory_bytes = (vo.memory_bytes + (2u << 20) - 1) & ~uint64_t((2u << 20) - 1);
  // Guest memory is the transport's region: the backup reads it directly.
  auto region = t.value()->allocate_region(vo.memory_bytes);
  if (!region.ok()) return out.result = failed("guest memory: " + region.status().message()), out;
  vo.memory_base = static_cast<uint8_t*>(region.value().base);
  uint32_t region_id = region.value().id;
  // Async: a registered staging region (allocated before the connection, so
  // the backup learns it too) for the pages left at the pause.
  LocalRegion staging{};
  if (eo.async) {
    auto st = t.value()->allocate_region(std::min<uint64_t>(vo.memory_bytes, kStagingBytes));
    if (!st.ok()) return out.result = failed("staging memory: " + st.status().message()), out;
    staging = st.value();
  }
  // Async: hot pages stay writable where KVM allows (hot_tracker.h), else
  // the dirty ring; stop-copy: the classic bitmap (Remus).
  vo.tracker = !eo.async                                  ? TrackerKind::kBitmap
               : eo.async_tracker != TrackerKind::kNone ? eo.async_tracker
               : HotTracker::supported()                ? TrackerKind::kHot
                                                        : TrackerKind::kRing;
  HeldOutputSink sink;
  vo.output = &sink;
  std::unique_ptr<Vm> vm;
  if (Status s = Vm::create(vo, &vm); !s.ok()) return out.result = failed(s.message()), out;
  std::vector<std::string> envp;
  for (char** e = environ; *e; ++e) envp.push_back(*e);
  if (Status s = vm->load(image, plan.path, plan.argv, envp); !s.ok()) return out.result = failed(s.message()), out;
  auto ch = t.value()->connect(eo.backup, *auth.value(), std::chrono::milliseconds(startup_limit_ms(eo.lease_ms)));
  if (!ch.ok()) return out.result = failed("backup " + eo.backup + ": " + ch.status().message()), out;
  Primary p(eo, *vm, sink, *ch.value(), region_id, staging, out.stats, started);
  out.result = p.run();
  vm.reset();  // before the region goes away
  return out;
}

}  // namespace vmha
