#include "vmha/cli/replicated_run.h"

#include <signal.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <numeric>
#include <string>
#include <utility>

#include "vmha/engine/epoch_manager.h"
#include "vmha/engine/guest_exit.h"
#include "vmha/track/dirty_tracker.h"
#include "vmha/track/hot_tracker.h"

namespace vmha {
namespace {

// --stats-file: the run's replication statistics as key=value lines for the
// SPANK plugin's accounting (epochs, pause_ms_mean, pause_ms_max, pause_count,
// prefetched_pages, residual_pages, zero_pages, backup_lost, stopped: it lost the backup
// and stopped the program, unprotected: it went on without a backup), written
// atomically; and,
// when the program was killed by a signal, guest_signal=N: vmha then ends by
// the same signal, and its supervisor must tell that apart from vmha itself
// being killed (which calls for the backup).
bool write_stats_file(const std::string& path, const EngineStats& s, const RunResult& r) {
  std::string tmp = path + ".tmp";
  std::FILE* f = std::fopen(tmp.c_str(), "w");
  if (!f) return false;
  double sum = std::accumulate(s.pause_ms.begin(), s.pause_ms.end(), 0.0);
  double max = s.pause_ms.empty() ? 0.0 : *std::max_element(s.pause_ms.begin(), s.pause_ms.end());
  double mean = s.pause_ms.empty() ? 0.0 : sum / static_cast<double>(s.pause_ms.size());
  std::fprintf(f, "epochs=%llu\npause_ms_mean=%.4f\npause_ms_max=%.4f\npause_count=%zu\n",
               static_cast<unsigned long long>(s.epochs), mean, max, s.pause_ms.size());
  std::fprintf(f, "prefetched_pages=%llu\nresidual_pages=%llu\nzero_pages=%llu\nbackup_lost=%d\nstopped=%d\nunprotected=%d\n",
               static_cast<unsigned long long>(s.prefetched_pages), static_cast<unsigned long long>(s.residual_pages),
               static_cast<unsigned long long>(s.zero_pages), s.backup_lost ? 1 : 0, s.stopped ? 1 : 0, s.unprotected ? 1 : 0);
  if (r.end == RunResult::End::kSignaled) std::fprintf(f, "guest_signal=%d\n", r.code);
  bool ok = std::fclose(f) == 0;
  return ok && std::rename(tmp.c_str(), path.c_str()) == 0;
}

// --stats-file while the program runs: running=1 and checkpoints=N, the
// last checkpoint the backup acknowledged; running=0 once it acknowledged
// the one of the program's end (vmha still says goodbye to the backup and
// then writes the statistics). A supervisor or a test can wait on it until
// the backup holds a checkpoint of the running program (one that prints
// only at its end shows nothing else). Checkpoint 1 and the end are
// written at once, others at most every kLiveEvery (the file may be on a
// network file system). None of the final keys: a reader of those (the
// SPANK plugin's accounting) sees no statistics before the end, as before.
class LiveStatsFile {
 public:
  explicit LiveStatsFile(std::string path) : path_(std::move(path)) {}
  void acknowledged(uint64_t checkpoint, bool finished) {
    auto now = std::chrono::steady_clock::now();
    if (checkpoint > 1 && !finished && now - written_ < kLiveEvery) return;
    written_ = now;
    std::string tmp = path_ + ".tmp";
    std::FILE* f = std::fopen(tmp.c_str(), "w");
    if (!f) return;  // the final write reports a path that cannot be written
    std::fprintf(f, "running=%d\ncheckpoints=%llu\n", finished ? 0 : 1, static_cast<unsigned long long>(checkpoint));
    if (std::fclose(f) == 0) std::rename(tmp.c_str(), path_.c_str());
  }

 private:
  static constexpr std::chrono::milliseconds kLiveEvery{50};
  std::string path_;
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
  LiveStatsFile live(o.stats_file);
  if (!o.stats_file.empty())
    eo.on_acknowledged = [&live](uint64_t checkpoint, bool finished) { live.acknowledged(checkpoint, finished); };
  ProtectedRun run = run_protected(eo, vo, o.argv);
  if (!o.stats_file.empty() && !write_stats_file(o.stats_file, run.stats, run.result))
    std::fprintf(stderr, "vmha: cannot write --stats-file %s\n", o.stats_file.c_str());
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
