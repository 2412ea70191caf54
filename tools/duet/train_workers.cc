// Which workers duet train runs with (train_workers.h).
#include "tools/duet/train_workers.h"

#include <stdexcept>
#include <string>

namespace duet::cli {
namespace {

// --store HOST[:PORT] over what the step's environment gave.
void apply_store(const std::string& store, learn::WorkerPlace& p) {
  const size_t colon = store.rfind(':');
  std::string host = store;
  if (colon != std::string::npos && store.find(':') == colon) {
    host = store.substr(0, colon);
    const std::string port = store.substr(colon + 1);
    size_t used = 0;
    int n = -1;
    try {
      n = std::stoi(port, &used);
    } catch (const std::exception&) {
    }
    if (used != port.size() || n < 1 || n > 65535)
      throw std::invalid_argument("--store " + store + ": expected HOST[:PORT] with a port in 1..65535");
    p.store_port = n;
  }
  if (host.empty()) throw std::invalid_argument("--store " + store + ": no host");
  p.store_host = host;
}

// The step's task 0 serves the store where the others look for it: on the
// step's first node.
void check_task0_node(const learn::WorkerPlace& p, const std::string& first, const EnvFn& env) {
  const char* here = env("SLURMD_NODENAME");
  if (p.rank == 0 && here && *here && first != here)
    throw std::runtime_error("task 0 of this step runs on " + std::string(here) + ", not on the step's first node " +
                             first + ", where the other tasks look for its store; give --store with task 0's host");
}

}  // namespace

std::string TrainWorkers::role() const {
  if (lead()) return "";
  return "worker " + std::to_string(group->rank()) + " of " + std::to_string(group->size());
}

void TrainWorkers::finish() {
  if (local) local->finish();
}

TrainWorkers start_workers(const WorkerOptions& o, const EnvFn& env) {
  if (o.workers < 1) throw std::invalid_argument("--workers: expected at least 1, got " + std::to_string(o.workers));
  TrainWorkers w;
  std::optional<learn::WorkerPlace> p = spawned_place(env);
  if (!p) {
    p = slurm_step_place(env);
    if (p) {
      if (o.workers_given && o.workers != p->size)
        throw std::invalid_argument("--workers " + std::to_string(o.workers) + " in a Slurm step of " +
                                    std::to_string(p->size) +
                                    " tasks: the step's tasks are the workers (leave --workers out)");
      if (!o.store.empty()) {
        apply_store(o.store, *p);
      } else {
        check_task0_node(*p, p->store_host, env);
        p->store_host = node_address(p->store_host);
      }
    }
  }
  if (!p && !o.store.empty())
    throw std::invalid_argument("--store is for the tasks of a Slurm step (srun -n N); --workers " +
                                std::to_string(o.workers) + " on one host needs no network store");
  if (!o.secret_file.empty() && !(p && p->store_path.empty()))
    throw std::invalid_argument("--store-secret is for the tasks of a Slurm step (srun -n N); --workers " +
                                std::to_string(o.workers) + " on one host needs no secret");
  if (p) {
    p->timeout_s = o.timeout_s;
    if (p->store_path.empty())  // a Slurm step: perhaps on several hosts
      p->secret = read_store_secret(o.secret_file.empty() ? default_store_secret_path(env) : o.secret_file);
    w.group = std::make_unique<learn::WorkerGroup>(*p);
  } else if (o.workers > 1) {
    w.dir = std::make_unique<PrivateStoreDir>();
    learn::WorkerPlace lp;
    lp.size = o.workers;
    lp.timeout_s = o.timeout_s;
    lp.store_path = w.dir->store_path();
    w.group = std::make_unique<learn::WorkerGroup>(lp);
    w.local = std::make_unique<LocalWorkers>(o.workers, lp.store_path);
  } else {
    return w;  // alone: exactly the trainer without workers
  }
  w.group->connect();
  if (w.dir || (p && !p->store_path.empty())) {
    // Every worker has joined and Gloo's connections are made: the FileStore
    // is not read again. Worker 0 removes it now, once all are past this
    // point, so that a run killed later leaves nothing behind in TMPDIR.
    w.group->any(false);
    w.dir.reset();
  }
  return w;
}

}  // namespace duet::cli
