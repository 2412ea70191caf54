#include "vmha/common/run_stats.h"

#include <fcntl.h>

#include "vmha/common/key_value.h"

namespace vmha {

namespace {

constexpr std::string_view kFormat = "vmha-run-stats/1";

}  // namespace

std::string format_run_stats(const RunStats& s) {
  KeyValueWriter w;
  w.text("format", kFormat);
  if (s.side == RunStats::Side::kLocal) return w.text("side", "local").count("syscalls", s.syscalls).str();
  if (s.side == RunStats::Side::kBackup) {
    w.text("side", "backup").flag("takeover", s.takeover).count("checkpoint", s.checkpoint);
    w.count("undone", s.undone).count("threads", s.threads);
    return w.str();
  }
  w.text("side", "primary").flag("running", s.running).count("checkpoints", s.checkpoints);
  if (s.running) return w.str();  // the totals come at the end
  w.count("epochs", s.epochs).decimal("pause_ms_mean", s.pause_ms_mean).decimal("pause_ms_max", s.pause_ms_max);
  w.count("pause_count", s.pause_count).count("prefetched_pages", s.prefetched_pages);
  w.count("residual_pages", s.residual_pages).count("zero_pages", s.zero_pages);
  w.flag("backup_lost", s.backup_lost).flag("stopped", s.stopped).flag("unprotected", s.unprotected);
  w.count("guest_signal", static_cast<uint64_t>(s.guest_signal));
  return w.str();
}

Status parse_run_stats(std::string_view text, RunStats* out) {
  Result<KeyValues> parsed = KeyValues::parse(text);
  if (!parsed.ok()) return parsed.status();
  KeyValues& kv = parsed.value();
  if (Status s = kv.format(kFormat); !s.ok()) return s;
  std::string side;
  if (Status s = kv.word("side", 16, &side); !s.ok()) return s;
  RunStats r;
  Status s;
  auto all = [&s](std::initializer_list<Status> each) {
    for (const Status& e : each)
      if (s.ok() && !e.ok()) s = e;
  };
  if (side == "local") {
    r.side = RunStats::Side::kLocal;
    all({kv.count("syscalls", kMaxStatsSyscalls, &r.syscalls)});
  } else if (side == "backup") {
    r.side = RunStats::Side::kBackup;
    all({kv.flag("takeover", &r.takeover), kv.count("checkpoint", kMaxStatsEpochs, &r.checkpoint),
         kv.count("undone", kMaxStatsEpochs, &r.undone), kv.count("threads", kMaxStatsThreads, &r.threads)});
  } else if (side == "primary") {
    uint64_t sig = 0;
    all({kv.flag("running", &r.running), kv.count("checkpoints", kMaxStatsEpochs, &r.checkpoints),
         kv.count("epochs", kMaxStatsEpochs, &r.epochs), kv.decimal("pause_ms_mean", kMaxStatsPauseMs, &r.pause_ms_mean),
         kv.decimal("pause_ms_max", kMaxStatsPauseMs, &r.pause_ms_max),
         kv.count("pause_count", kMaxStatsEpochs, &r.pause_count),
         kv.count("prefetched_pages", kMaxStatsPages, &r.prefetched_pages),
         kv.count("residual_pages", kMaxStatsPages, &r.residual_pages),
         kv.count("zero_pages", kMaxStatsPages, &r.zero_pages), kv.flag("backup_lost", &r.backup_lost),
         kv.flag("stopped", &r.stopped), kv.flag("unprotected", &r.unprotected),
         kv.count("guest_signal", kMaxStatsSignal, &sig)});
    r.guest_signal = static_cast<int>(sig);
  } else {
    return Status::error("side: expected primary, backup or local, got '" + side + "'");
  }
  if (!s.ok()) return s;
  if (Status o = kv.no_others(); !o.ok()) return o;
  *out = r;
  return Status();
}

Status write_run_stats(const std::string& path, const RunStats& s) {
  return write_file_atomically(path, format_run_stats(s));
}

Status read_run_stats(const std::string& path, RunStats* out) {
  std::string text;
  if (Status s = read_small_file(AT_FDCWD, path, kMaxRunStatsBytes, &text); !s.ok()) return s;
  return parse_run_stats(text, out);
}

}  // namespace vmha
