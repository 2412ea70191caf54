// Where duet train's workers come from (duet-train(1), WORKERS): the tasks of
// a Slurm job step (srun -n N duet train ...), or N processes the command
// starts itself on this host (--workers N). Either way they meet in
// learn::WorkerGroup (c10d); worker 0 is the one that writes.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "policy/learn/train/workers.h"

namespace duet::cli {

// getenv, or a table in tests.
using EnvFn = std::function<const char*(const char*)>;

// ---- Slurm (train_slurm.cc) ----------------------------------------------

// A task of a Slurm job step of more than one task: SLURM_PROCID,
// SLURM_STEP_NUM_TASKS, the first node of SLURM_STEP_NODELIST (its name, as
// store_host), step_store_port(SLURM_JOB_ID, SLURM_STEP_ID) and the scope
// "slurm job J step S" (no secret yet: start_workers reads it). nullopt
// outside such a step: a batch script has SLURM_PROCID and SLURM_NTASKS but
// no step, and a step of one task trains alone or with --workers. Throws
// std::runtime_error naming a variable it cannot read.
std::optional<learn::WorkerPlace> slurm_step_place(const EnvFn& env);

// The first host of a Slurm host list: "gpu[07-09,12],cpu1" -> "gpu07".
std::string first_host(const std::string& hostlist);

// The store's port of a job step, the same for all its tasks and different
// for the steps of a job: 29500 + (job * 16 + step) % 2000.
int step_store_port(std::uint64_t job, std::uint64_t step);

// An address to reach Slurm node `node` at: its name when that resolves,
// else its NodeAddr from `scontrol show node` (Slurm's node names need not
// be host names). Throws std::runtime_error when neither gives one.
std::string node_address(const std::string& node);

// ---- the store's secret across hosts (train_secret.cc) --------------------

// --store-secret's default: $HOME/.duet/train-secret.
std::string default_store_secret_path(const EnvFn& env);

// The secret of a TCP store (learn::store_key_prefix): the bytes of `path`,
// trailing white space dropped. Refused (std::runtime_error naming the file
// and how to make a good one) unless it is a regular file owned by this
// process's user that no one else may read or write (mode 0600 or 0400),
// holding 16 to 4096 bytes.
std::string read_store_secret(const std::string& path);

// ---- workers started here (train_spawn.cc) -------------------------------

// The place of a worker that `duet train --workers N` started:
// DUET_TRAIN_WORKER=RANK/SIZE@PATH (the FileStore's absolute path) in its
// environment; nullopt without.
std::optional<learn::WorkerPlace> spawned_place(const EnvFn& env);

// A directory for the FileStore of --workers N: made by mkdtemp under
// $TMPDIR (or /tmp), so this user's and mode 0700; removed with what is in
// it when this object goes.
class PrivateStoreDir {
 public:
  PrivateStoreDir();
  ~PrivateStoreDir();
  PrivateStoreDir(const PrivateStoreDir&) = delete;
  PrivateStoreDir& operator=(const PrivateStoreDir&) = delete;
  const std::string& dir() const { return dir_; }
  std::string store_path() const { return dir_ + "/store"; }

 private:
  std::string dir_;
};

// Workers 1..size-1 of --workers N on this host: this same command (same
// arguments) again, each with DUET_TRAIN_WORKER naming its rank and the
// store's path, stdout on /dev/null, stderr shared. A watcher thread ends the
// whole run, with a message naming the worker, as soon as one fails; a
// worker ends when this process does (PR_SET_PDEATHSIG).
class LocalWorkers {
 public:
  LocalWorkers(int size, const std::string& store_path);
  ~LocalWorkers();  // stops the watcher; terminates workers still running
  LocalWorkers(const LocalWorkers&) = delete;
  LocalWorkers& operator=(const LocalWorkers&) = delete;
  // After training: waits for every worker to end; throws naming one that failed.
  void finish();

 private:
  void watch();
  std::string store_path_;     // removed, with its directory, when a worker fails
  std::vector<pid_t> pids_;    // index: rank - 1
  std::vector<int> statuses_;  // wait status; -1: not reaped yet (the watcher's until joined)
  std::atomic<bool> stop_{false};
  std::thread watcher_;
};

// ---- choosing (train_workers.cc) -----------------------------------------

struct WorkerOptions {
  int workers = 1;             // --workers
  bool workers_given = false;  // --workers was on the command line
  std::string store;           // --store HOST[:PORT] (Slurm steps)
  std::string secret_file;     // --store-secret (Slurm steps; "" = default_store_secret_path)
  double timeout_s = 600;      // --worker-timeout
};

// This process's part among duet train's workers.
struct TrainWorkers {
  std::unique_ptr<PrivateStoreDir> dir;       // worker 0 of --workers N: the store's, until all joined
  std::unique_ptr<learn::WorkerGroup> group;  // null: alone (one worker)
  std::unique_ptr<LocalWorkers> local;        // worker 0 of --workers N: the others
  bool lead() const { return !group || group->rank() == 0; }
  // "" for worker 0 (or alone); "worker R of N" for the others, for their messages
  std::string role() const;
  void finish();  // after training (waits for the local workers)
};

// A spawned worker, a task of a Slurm step of several tasks, --workers N
// (this process is worker 0 and starts the others) or alone, in that order;
// connected (every worker has joined) when it returns. --workers N meet in a
// FileStore in a PrivateStoreDir (no socket); a Slurm step's tasks, which may
// be on several hosts, in task 0's TCPStore under the secret read from
// --store-secret. Throws std::invalid_argument for options that contradict
// the step, std::runtime_error for a secret file that is refused.
TrainWorkers start_workers(const WorkerOptions& o, const EnvFn& env);

}  // namespace duet::cli
