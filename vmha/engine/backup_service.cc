#include "vmha/engine/backup_service.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <thread>

#include "vmha/backup/image_store.h"
#include "vmha/backup/lease.h"
#include "vmha/checkpoint/checkpoint_receiver.h"
#include "vmha/common/run_stats.h"
#include "vmha/engine/epoch_state.h"
#include "vmha/engine/guest_exit.h"
#include "vmha/output/undo_log.h"
#include "vmha/sys/confinement.h"
#include "vmha/sys/removed_files.h"
#include "vmha/transport/ucx_transport.h"

namespace vmha {

namespace {

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;
constexpr uint64_t kPage = 4096;
const char* kWho = "vmha backup";

int fail(const std::string& what) {
  std::fprintf(stderr, "%s: %s\n", kWho, what.c_str());
  return 125;
}

// --stdout/--stderr: opened (appending) when the backup starts, so a bad
// path fails at once; put in place as fds 1 and 2 only at a takeover.
class OutputFiles {
 public:
  OutputFiles() = default;
  OutputFiles(const OutputFiles&) = delete;
  OutputFiles& operator=(const OutputFiles&) = delete;
  ~OutputFiles() {
    for (int fd : fds_)
      if (fd >= 0) close(fd);
  }
  Status open(const std::string& out, const std::string& err) {
    const std::string* paths[2] = {&out, &err};
    for (int i = 0; i < 2; ++i) {
      if (paths[i]->empty()) continue;
      fds_[i] = ::open(paths[i]->c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
      if (fds_[i] < 0) return Status::error(errno_text((i == 0 ? "--stdout " : "--stderr ") + *paths[i]));
    }
    return Status();
  }
  Status install() const {
    for (int i = 0; i < 2; ++i)
      if (fds_[i] >= 0 && dup2(fds_[i], i + 1) < 0) return Status::error(errno_text("redirecting the guest's output"));
    return Status();
  }

 private:
  int fds_[2] = {-1, -1};
};

// The committed image, decoded. Epoch 0: nothing committed.
struct Committed {
  uint64_t epoch = 0;
  EpochState state;
  Status status;
};

// Resumes the guest of the committed image in a fresh VMM and runs it to the end.
int take_over(const BackupOptions& o, ImageStore& store, const OutputFiles& files) {
  // Before the restore: the guest's stream fds are duplicates of fds 1 and 2.
  if (Status s = files.install(); !s.ok()) return fail("takeover: " + s.message());
  std::unique_ptr<Vm> vm;
  EpochState st;
  Status status;
  uint64_t epoch = 0;
  size_t undone = 0;
  store.read_committed([&](const CommittedImage& img) {
    epoch = img.epoch;
    if (img.epoch == 0) {
      status = Status::error("no checkpoint was committed; nothing to resume");
      return;
    }
    status = EpochState::decode(img.state, &st);
    if (!status.ok() || (st.flags & EpochState::kFinished)) return;
    // The file system as this checkpoint left it: the changes the primary
    // made after it are undone first (output/undo_log.h), so that reopening
    // the guest's files and running its calls again find what it saw.
    int root = open(o.workdir.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (root < 0) {
      status = Status::error(errno_text("working directory " + o.workdir));
      return;
    }
    status = undo_changes_after(root, run_state_dir(Vm::run_id_of(st.vm_state)), img.epoch, &undone);
    close(root);
    if (!status.ok()) return;
    VmOptions vo;
    vo.workdir = o.workdir;
    vo.read_only = o.read_only;
    vo.tracker = TrackerKind::kNone;
    vo.relay_host_signals = true;  // from the takeover on, this vmha runs the guest
    status = Vm::restore(vo, st.vm_state, &vm);
    if (!status.ok()) return;
    // The state carries no frames: they are the committed memory.
    uint64_t used = std::min<uint64_t>(vm->memory().bump(), img.memory.size());
    used = std::min<uint64_t>(used, vm->memory().size());
    std::memcpy(vm->memory().base(), img.memory.data(), used);
    vm->adopt_memory();
  });
  if (!status.ok()) return fail("takeover: " + status.message());
  uint64_t written = 0;
  if (Status s = release_unreleased(st, o.workdir, &written); !s.ok()) return fail("takeover: " + s.message());
  // Files the primary held for this checkpoint are open now: this run has
  // no backup (sys/removed_files.h). Other tasks' held files stay.
  if (vm) delete_held_files(vm->processes(), vm->process().root);
  // The guest's threads in that checkpoint: a test can tell a threaded
  // program was caught mid-run (none when it had finished).
  size_t threads = vm ? vm->process().threads.live() : 0;
  std::fprintf(stderr,
               "%s: primary lost; resuming from checkpoint %llu (%zu guest threads); %zu later file-system changes "
               "undone\n",
               kWho, static_cast<unsigned long long>(epoch), threads, undone);
  if (!o.stats_file.empty()) {
    RunStats taken;
    taken.side = RunStats::Side::kBackup;
    taken.takeover = true;
    taken.checkpoint = epoch;
    taken.undone = undone;
    taken.threads = threads;
    if (Status s = write_run_stats(o.stats_file, taken); !s.ok())
      std::fprintf(stderr, "%s: --stats-file: %s\n", kWho, s.message().c_str());
  }
  if (st.flags & EpochState::kFinished) {
    // The primary died after the end, before it removed the run's own
    // directories (sys/confinement.h): they go now.
    Confinement run;
    if (run.open_root(o.workdir, {}, Vm::run_id_of(st.vm_state)).ok()) run.remove_private();
    RunResult r;
    r.end = static_cast<RunResult::End>(st.end_kind);
    r.code = st.end_code;
    return exit_like_guest(r, kWho);
  }
  RunResult r = vm->run();
  vm->process().root.remove_private();
  return exit_like_guest(r, kWho);
}

bool fence(const BackupOptions& o) {
  if (o.fence_cmd.empty()) return true;
  int rc = std::system(o.fence_cmd.c_str());
  if (rc != -1 && WIFEXITED(rc) && WEXITSTATUS(rc) == 0) return true;
  std::fprintf(stderr, "%s: fencing command failed (%s): not taking over\n", kWho, o.fence_cmd.c_str());
  return false;
}

// --address-file: the listening address, put in place atomically.
void publish_address(const std::string& address_file, const std::string& address) {
  if (address_file.empty()) return;
  std::string tmp = address_file + ".tmp";
  {
    std::ofstream f(tmp);
    f << address << "\n";
  }
  std::rename(tmp.c_str(), address_file.c_str());
}

// The first primary that authenticates within --accept-timeout; peers
// refused on the way are reported. nullptr when none came.
std::unique_ptr<Channel> accept_primary(Transport& t, const Authenticator& auth, const BackupOptions& o) {
  std::unique_ptr<Channel> ch;
  auto deadline = Clock::now() + std::chrono::seconds(o.accept_timeout_s);
  while (!ch) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) return nullptr;
    auto c = t.accept(auth, left);
    if (c.ok())
      ch = c.take();
    else if (!Channel::timed_out(c.status()))
      std::fprintf(stderr, "%s: refused a peer: %s\n", kWho, c.status().message().c_str());
  }
  return ch;
}

// The image of the primary's memory; the slots checkpoints are read into are
// registered with the transport when it can (reads into registered memory
// are faster; unregistered ones work).
std::unique_ptr<ImageStore> make_image_store(Transport& t, uint64_t pages) {
  auto store = std::make_unique<ImageStore>(kPage, pages);
  // Pages are read into the slots, and into the image where it holds nothing committed.
  for (std::span<uint8_t> area : {store->slot_area(), store->image_area()})
    if (auto r = t.register_region(area.data(), area.size()); !r.ok())
      std::fprintf(stderr, "%s: reading checkpoints into unregistered memory: %s\n", kWho, r.status().message().c_str());
  return store;
}

// The primary finished and said goodbye: exit as its guest did, per the
// last committed checkpoint (0 when that does not say). The run's own
// directories go too, should the primary have died before it removed them.
int exit_code_after_bye(ImageStore& store, const std::string& workdir) {
  int code = 0;
  store.read_committed([&](const CommittedImage& img) {
    EpochState st;
    if (EpochState::decode(img.state, &st).ok() && (st.flags & EpochState::kFinished)) {
      Confinement run;
      if (run.open_root(workdir, {}, Vm::run_id_of(st.vm_state)).ok()) run.remove_private();
      RunResult r;
      r.end = static_cast<RunResult::End>(st.end_kind);
      r.code = st.end_code;
      code = r.end == RunResult::End::kExited ? r.code : r.end == RunResult::End::kSignaled ? 128 + r.code : 125;
    }
  });
  return code;
}

// The signal that asked this step to end (Slurm sends SIGTERM to every
// process of the step at scancel or its time limit), 0 while none came.
volatile sig_atomic_t g_end_signal = 0;
void on_end_signal(int sig) { g_end_signal = sig; }

}  // namespace

int run_backup(const BackupOptions& o) {
  signal(SIGPIPE, SIG_IGN);
  // Slurm signals every process of a step (scancel --signal=USR1, --signal=
  // USR2@60): until a takeover the guest runs on the primary, which got its
  // own copy; their default action would end this backup and leave the job
  // unprotected. From the takeover on, the VM relays them to the guest.
  signal(SIGUSR1, SIG_IGN);
  signal(SIGUSR2, SIG_IGN);
  // SIGTERM (and SIGINT, SIGHUP) end the step: the primary relays it to the
  // guest, whose handler may still write a last line, and that line leaves
  // only once this backup acknowledges its checkpoint. So the backup keeps
  // serving the primary to its end, but no longer takes over: resuming a
  // program its user asked to end would run it on.
  struct sigaction sa{};
  sa.sa_handler = on_end_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  for (int sig : {SIGTERM, SIGINT, SIGHUP}) sigaction(sig, &sa, nullptr);
  // Room for the connections that wait to speak before authentication
  // (handshake_listener.h): the soft descriptor limit up to the hard one.
  rlimit nofile{};
  if (getrlimit(RLIMIT_NOFILE, &nofile) == 0 && nofile.rlim_cur < nofile.rlim_max) {
    nofile.rlim_cur = nofile.rlim_max;
    setrlimit(RLIMIT_NOFILE, &nofile);
  }
  OutputFiles files;
  if (Status s = files.open(o.stdout_file, o.stderr_file); !s.ok()) return fail(s.message());
  auto auth = SharedKeyAuthenticator::from_file(o.key_file);
  if (!auth.ok()) return fail(auth.status().message());
  UcxOptions uo;
  uo.transports = o.transports;
  uo.network_address = o.listen;  // UCX may use only the interface listened on
  auto t = make_ucx_transport(uo);
  if (!t.ok()) return fail(t.status().message());
  if (Status s = t.value()->listen(o.listen); !s.ok()) return fail(s.message());
  publish_address(o.address_file, t.value()->listen_address());
  std::unique_ptr<Channel> ch = accept_primary(*t.value(), *auth.value(), o);
  if (!ch) return fail("no authenticated primary connected within " + std::to_string(o.accept_timeout_s) + " s");
  if (ch->remote_regions().empty()) return fail("the primary exposed no memory region");
  uint64_t bytes = ch->remote_regions()[0].length;
  std::unique_ptr<ImageStore> store = make_image_store(*t.value(), bytes / kPage);
  Lease lease(std::chrono::milliseconds(o.lease_ms), Clock::now());
  lease.connection_up(Clock::now());
  CheckpointReceiver rx(*ch, *store, lease);
  bool connected = true;
  bool standing_down = false;  // answered StandDown, waiting for the primary's confirmation
  while (true) {
    if (connected) {
      auto step = rx.step(50ms);
      // Heard on the liveness path (transport.h) while a step pulled pages.
      if (auto alive = ch->liveness(); alive != Clock::time_point{}) lease.heard(alive);
      if (!step.ok()) {
        std::fprintf(stderr, "%s: connection to the primary lost: %s\n", kWho, step.status().message().c_str());
        connected = false;
        lease.connection_lost();
      } else if (step.value().event == CheckpointReceiver::Event::kBye) {
        // The primary finished and released everything itself.
        int code = exit_code_after_bye(*store, o.workdir);
        ch->close();
        return code;
      } else if (step.value().event == CheckpointReceiver::Event::kStandDown && !standing_down) {
        // The primary asks to go on alone. Bye says this backup agrees; it
        // stands down only once the primary confirms it read that (a second
        // StandDown): a primary that gave up waiting stopped instead, and
        // its connection ends without a confirmation, which leaves the
        // takeover to this backup as for any lost primary.
        standing_down = true;
        (void)ch->send(ByeMsg{}.to_frame());
      } else if (step.value().event == CheckpointReceiver::Event::kStandDown) {
        // It releases output this image does not hold: resuming it later
        // would print that output again, so this backup ends here.
        std::fprintf(stderr, "%s: the primary went on without this backup (%s); not taking over\n", kWho,
                     step.value().reason.c_str());
        ch->close();
        return 125;
      } else if (const int limit = store->committed_epoch() >= 1 ? silence_limit_ms(o.lease_ms)
                                                                  : startup_limit_ms(o.lease_ms);
                 lease.silence(Clock::now()) > std::chrono::milliseconds(limit)) {
        // A connection that stays silent this long counts as gone. Until
        // checkpoint 1 (the whole loaded program) is stored, the start-up
        // limit, as the primary waits for it: a loaded host can take longer
        // than the silence limit to send it, and giving up then fails the job.
        std::fprintf(stderr, "%s: nothing heard from the primary for %d ms\n", kWho, limit);
        connected = false;
        lease.connection_lost();
      }
      continue;
    }
    if (const int sig = g_end_signal) {
      std::fprintf(stderr, "%s: the primary is gone after the step was told to end (%s): not taking over\n", kWho,
                   strsignal(sig));
      return 128 + sig;
    }
    if (!lease.peer_lost(Clock::now())) {
      std::this_thread::sleep_for(10ms);
      continue;
    }
    if (g_end_signal) continue;  // checked above, on the next turn
    if (!fence(o)) return 125;
    ch.reset();
    return take_over(o, *store, files);
  }
}

}  // namespace vmha
