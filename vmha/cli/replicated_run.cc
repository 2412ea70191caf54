#include "vmha/cli/replicated_run.h"

#include <signal.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <numeric>
#include <string>
#include <utility>

#include "vmha/common/run_stats.h"
#include "vmha/engine/epoch_manager.h"
#include "vmha/engine/guest_exit.h"
#include "vmha/track/dirty_tracker.h"
#include "vmha/track/hot_tracker.h"

namespace vmha {
namespace {

// --stats-file (common/run_stats.h): while the program runs, running=1 and
// the last checkpoint the backup acknowledged; at the end the totals, and
// guest_signal=N when the program was killed by a signal: vmha then ends by
// the same signal, and its supervisor must tell that apart from vmha itself
// being killed (which calls for the backup). A supervisor or a test waits
// on it until the backup holds a checkpoint of the running program (one
// that prints only at its end shows nothing else). Checkpoint 1 and the end
// are written at once, others at most every kLiveEvery (the file may be on
// a network file system).
class StatsFile {
 public:
  explicit StatsFile(std::string path) : path_(std::move(path)) {}
  void acknowledged(uint64_t checkpoint, bool finished) {
    auto now = std::chrono::steady_clock::now();
    acked_ = checkpoint;
    if (checkpoint > 1 && !finished && now - written_ < kLiveEvery) return;
    written_ = now;
    RunStats live;
    live.running = !finished;
    live.checkpoints = checkpoint;
    (void)write_run_stats(path_, live);  // the final write reports a path that cannot be written
  }
  Status finish(const EngineStats& s, const RunResult& r) const {
    RunStats f;
    f.checkpoints = acked_;
    f.epochs = s.epochs;
    const double sum = std::accumulate(s.pause_ms.begin(), s.pause_ms.end(), 0.0);
    f.pause_count = s.pause_ms.size();
    f.pause_ms_mean = s.pause_ms.empty() ? 0.0 : sum / static_cast<double>(s.pause_ms.size());
    f.pause_ms_max = s.pause_ms.empty() ? 0.0 : *std::max_element(s.pause_ms.begin(), s.pause_ms.end());
    f.prefetched_pages = s.prefetched_pages;
    f.residual_pages = s.residual_pages;
    f.zero_pages = s.zero_pages;
    f.backup_lost = s.backup_lost;
    f.stopped = s.stopped;
    f.unprotected = s.unprotected;
    if (r.end == RunResult::End::kSignaled) f.guest_signal = r.code;
    return write_run_stats(path_, f);
  }

 private:
  static constexpr std::chrono::milliseconds kLiveEvery{50};
  std::string path_;
  uint64_t acked_ = 0;
  std::chrono::steady_clock::time_point written_{};
};

}  // namespace

int run_replicated(const RunCommandOptions& o) {
  signal(SIGPIPE, SIG_IGN);
  EngineOptions eo;
  eo.backup = o.backup;
  eo.key_file = o.key_file;
  if (o.mode == "async")
    eo.async = true;
  else if (o.mode == "stop-copy")
    eo.async = false;
  else
    return std::fprintf(stderr, "vmha: --mode %s: expected async or stop-copy\n", o.mode.c_str()), 125;
  if (o.key_file.empty()) return std::fprintf(stderr, "vmha: --backup needs --key FILE\n"), 125;
  if (o.epoch_ms < kMinEpochMs || o.epoch_ms > kMaxEpochMs)
    return std::fprintf(stderr, "vmha: --epoch-ms %d: expected %d..%d\n", o.epoch_ms, kMinEpochMs, kMaxEpochMs), 125;
  if (o.lease_ms < kMinLeaseMs || o.lease_ms > kMaxLeaseMs)
    return std::fprintf(stderr, "vmha: --lease-ms %d: expected %d..%d\n", o.lease_ms, kMinLeaseMs, kMaxLeaseMs), 125;
  eo.epoch_ms = o.epoch_ms;
  eo.lease_ms = o.lease_ms;
  // --tracker: async takes ring or hot; stop-copy keeps its bitmap.
  if (o.tracker != "none") {
    TrackerKind k;
    if (Status s = parse_tracker_kind(o.tracker, &k); !s.ok())
      return std::fprintf(stderr, "vmha: %s\n", s.message().c_str()), 125;
    if (!eo.async || (k != TrackerKind::kRing && k != TrackerKind::kHot))
      return std::fprintf(stderr, "vmha: --tracker %s with --backup: async takes ring or hot; stop-copy uses the bitmap\n",
                          o.tracker.c_str()),
             125;
    if (k == TrackerKind::kHot && !HotTracker::supported())
      return std::fprintf(stderr, "vmha: --tracker hot: this host's KVM lacks KVM_CAP_MANUAL_DIRTY_LOG_PROTECT2\n"), 125;
    eo.async_tracker = k;
  }
  if (o.on_backup_loss != "stop" && o.on_backup_loss != "continue")
    return std::fprintf(stderr, "vmha: --on-backup-loss %s: expected stop or continue\n", o.on_backup_loss.c_str()),
           125;
  eo.continue_after_loss = o.on_backup_loss == "continue";
  VmOptions vo;
  vo.workdir = o.workdir;
  vo.read_only = o.read_only;
  vo.memory_bytes = o.memory_mib << 20;
  vo.vcpus = static_cast<int>(o.vcpus);
  vo.relay_host_signals = true;
  vo.run_id = new_run_id();  // its private /tmp and /dev/shm
  StatsFile stats(o.stats_file);
  if (!o.stats_file.empty())
    eo.on_acknowledged = [&stats](uint64_t checkpoint, bool finished) { stats.acknowledged(checkpoint, finished); };
  ProtectedRun run = run_protected(eo, vo, o.argv);
  if (!o.stats_file.empty())
    if (Status s = stats.finish(run.stats, run.result); !s.ok())
      std::fprintf(stderr, "vmha: cannot write --stats-file: %s\n", s.message().c_str());
  if (o.stats) {
    std::fprintf(
        stderr, "vmha: %llu epochs, %llu pages prefetched, %llu residual, %llu zero%s\n",
        static_cast<unsigned long long>(run.stats.epochs), static_cast<unsigned long long>(run.stats.prefetched_pages),
        static_cast<unsigned long long>(run.stats.residual_pages), static_cast<unsigned long long>(run.stats.zero_pages),
        run.stats.backup_lost ? ", backup lost" : "");
    // Where the time went: the guest's wall and CPU time, and the time the
    // checkpoints took from it (paused, or waiting for pre-copy).
    auto sum = [](const std::vector<double>& v) { return std::accumulate(v.begin(), v.end(), 0.0); };
    std::vector<double> lat = run.stats.output_latency_ms;
    std::sort(lat.begin(), lat.end());
    std::fprintf(stderr,
                 "vmha: start-up %.3f s, guest %.3f s wall, %.3f s CPU; paused %.1f ms in all (stop %.1f, harvest %.1f, "
                 "pages %.1f, state %.1f), pre-copy %.1f ms; output latency p50 %.2f ms over %zu records\n",
                 run.stats.startup_s, run.stats.guest_s, run.stats.guest_cpu_s, sum(run.stats.pause_ms),
                 sum(run.stats.stop_ms), sum(run.stats.harvest_ms), sum(run.stats.pull_ms), sum(run.stats.state_ms),
                 sum(run.stats.catch_up_ms), lat.empty() ? 0.0 : lat[lat.size() / 2], lat.size());
  }
  return exit_like_guest(run.result, "vmha");
}

}  // namespace vmha
