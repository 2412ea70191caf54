// Training workers (duet-train(1), WORKERS): processes that each run their own
// rollouts of every episode and average their gradients before each
// optimiser step, so that all of them hold the same parameters. The group is
// LibTorch's c10d: a store for the rendezvous and a Gloo process group for
// the collectives. Torch-free header.
//
// The store, by where the workers are:
//   one host      a c10d FileStore in a directory only this user can enter
//                 (store_path): no socket at all, so nothing to reach from
//                 the network or from other users; Gloo on 127.0.0.1.
//   several hosts worker 0's c10d TCPStore (store_host:store_port), which
//                 listens on every interface and checks nothing itself:
//                 every key lives under a prefix derived from `secret` and
//                 `scope` (store_key.h), and a worker whose secret differs
//                 is refused.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace c10d {
class ProcessGroup;
}

namespace duet::learn {

// Where one worker stands: its rank, how many there are, where the store is.
struct WorkerPlace {
  int rank = 0, size = 1;
  // All workers on this host: the FileStore's path, in a directory owned by
  // this user and closed to others (mode 0700), checked before use.
  std::string store_path;
  // Otherwise (store_path empty): worker 0's TCPStore.
  std::string store_host = "127.0.0.1";  // what the workers other than 0 connect to
  int store_port = 0;                    // worker 0 with 0: any free port (store_port())
  std::string secret;                    // >= kMinStoreSecretBytes (store_key.h); required
  std::string scope;                     // the run, e.g. "slurm job 41 step 3" (store_key.h)
  // Seconds the rendezvous and each collective may wait for the others: a
  // worker that dies is seen at once (its connections close), one that hangs
  // or never starts only after this.
  double timeout_s = 600;
};

// Throws std::invalid_argument naming what is wrong (rank out of range, a
// TCP store without a secret, ...).
void check_place(const WorkerPlace& p);

class WorkerGroup {
 public:
  // Opens the store: the FileStore (its directory checked first), or worker
  // 0 serves the TCPStore and greets under the secret's prefix while the
  // others connect to store_host:store_port, retrying until the timeout,
  // and are refused if they find no greeting under their own prefix.
  // Does not wait for the others. Throws std::runtime_error.
  explicit WorkerGroup(const WorkerPlace& p);
  ~WorkerGroup();
  WorkerGroup(const WorkerGroup&) = delete;
  WorkerGroup& operator=(const WorkerGroup&) = delete;

  // Joins the process group; returns once every worker has, throws
  // std::runtime_error after the timeout.
  void connect();

  int rank() const;
  int size() const;
  int store_port() const;  // the port worker 0 serves on (also when it was 0); 0 for a FileStore

  // Element-wise sums over the workers, the same on every worker (each
  // collective is called by every worker in the same order).
  void sum(std::vector<double>& v);
  bool any(bool b);
  // The Gloo group, for the collectives on tensors (grad_sync.h).
  c10d::ProcessGroup& group();
  // Runs f, a collective on group(), turning c10d's errors into
  // std::runtime_error that say what failed (without c10d's backtrace).
  static void collective(const std::string& what, const std::function<void()>& f);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace duet::learn
