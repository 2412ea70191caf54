// Training workers (duet-train(1), WORKERS): processes that each run their own
// rollouts of every episode and average their gradients before each
// optimiser step, so that all of them hold the same parameters. The group is
// LibTorch's c10d: a TCPStore hosted by worker 0 for the rendezvous and a
// Gloo process group for the collectives. Torch-free header.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace c10d {
class ProcessGroup;
}

namespace duet::learn {

// Where one worker stands: its rank, how many there are, where worker 0's
// store listens.
struct WorkerPlace {
  int rank = 0, size = 1;
  std::string store_host = "127.0.0.1";  // what the workers other than 0 connect to
  int store_port = 0;                    // worker 0 with 0: any free port (store_port())
  // Seconds the rendezvous and each collective may wait for the others: a
  // worker that dies is seen at once (its connections close), one that hangs
  // or never starts only after this.
  double timeout_s = 600;
};

// Throws std::invalid_argument naming what is wrong (rank out of range, ...).
void check_place(const WorkerPlace& p);

class WorkerGroup {
 public:
  // Opens the store: worker 0 serves it (on every interface of its host),
  // the others connect to store_host:store_port, retrying until the
  // timeout. Does not wait for the others. Throws std::runtime_error.
  explicit WorkerGroup(const WorkerPlace& p);
  ~WorkerGroup();
  WorkerGroup(const WorkerGroup&) = delete;
  WorkerGroup& operator=(const WorkerGroup&) = delete;

  // Joins the process group; returns once every worker has, throws
  // std::runtime_error after the timeout.
  void connect();

  int rank() const;
  int size() const;
  int store_port() const;  // the port worker 0 serves on (also when it was 0)

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
