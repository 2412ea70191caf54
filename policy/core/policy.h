// The scheduling seam: what a policy sees and what it decides.
//
// The simulator, the trainer and the Slurm plugins all call policies through
// these interfaces. A policy sees read-only views of pending/running jobs and of
// machines; it never sees simulator or Slurm types. Views are valid only for the
// duration of the call that receives them.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace duet {

// A value a caller does not know (e.g. the true duration outside the simulator).
inline constexpr double kUnknown = -1.0;

struct JobView {
  int64_t id = 0;
  int gpus = 0;
  // Allowed GPU types: bit i set = ClusterView::gpu_types[i] allowed; 0 = any.
  uint64_t type_mask = 0;
  double submit_s = 0;  // submit time, seconds from trace start
  double wait_s = 0;    // time spent pending so far (excludes run time)
  std::string_view user, vc, job_type;
  double attained_gpu_s = 0;  // GPU-seconds of service received so far
  double run_s = 0;           // wall seconds run so far (all attempts)
  bool running = false;
  // True reference-GPU run time and what is left of it; kUnknown unless the
  // caller knows (simulator). Only *oracle* policies may use these.
  double oracle_duration_s = kUnknown;
  double oracle_remaining_s = kUnknown;
  // User's time limit in seconds (Slurm); kUnknown when absent.
  double time_limit_s = kUnknown;
};

struct MachineView {
  std::string_view name;
  int gpu_type = 0;  // index into ClusterView::gpu_types
  int total_gpus = 0;
  int free_gpus = 0;
  int rack = 0;
  double speed = 1;  // known persistent speed vs the reference GPU (type x machine)
  int jobs = 0;      // jobs running on it now (co-location)
};

struct ClusterView {
  double now_s = 0;
  std::span<const std::string> gpu_types;
  std::span<const MachineView> machines;
  int total_gpus = 0;
  int free_gpus = 0;
  // How many of the most urgent jobs the caller needs ranked at least; 0 = all.
  size_t rank_limit = 0;
};

// True when machine m may host job j (type constraint only).
inline bool type_allowed(const JobView& j, const MachineView& m) {
  return j.type_mask == 0 || (j.type_mask >> m.gpu_type) & 1u;
}

// Consolidation: a job that one machine it may use could hold whole (by its
// GPUs, free or not) waits for such a machine to be free rather than being
// spread. A spread job runs at its slowest machine's speed, and it splits the
// whole machines that the next jobs of its size need, so they are spread in
// turn (on a cluster of 8-GPU machines with mostly 8-GPU jobs, those queued
// 74 h on average when spread, 8 h when waiting; models/HISTORY.md,
// Consolidation). The learned placement does so (placement_routine.h); the
// baselines' "-wait" variants do (policy/baselines/placement.h).
template <class Allowed>
inline bool one_machine_could_hold(std::span<const MachineView> machines, int gpus, Allowed allowed) {
  for (std::size_t i = 0; i < machines.size(); ++i)
    if (machines[i].total_gpus >= gpus && allowed(i)) return true;
  return false;
}

// The rule as a placement applies it: no machine it may use has the GPUs
// free now, but one of them could hold the job whole, so it waits. (The
// learned routine knows the first half from its candidates and asks only
// one_machine_could_hold.)
template <class Allowed>
inline bool waits_for_one_machine(std::span<const MachineView> machines, int gpus, Allowed allowed) {
  for (std::size_t i = 0; i < machines.size(); ++i)
    if (machines[i].free_gpus >= gpus && allowed(i)) return false;
  return one_machine_could_hold(machines, gpus, allowed);
}

// Where one job runs: GPUs taken on each machine (indices into
// ClusterView::machines). The counts sum to JobView::gpus.
struct PlacementPart {
  int machine = 0;
  int gpus = 0;
  bool operator==(const PlacementPart&) const = default;
};
using Placement = std::vector<PlacementPart>;

// Ranks jobs: fills `order` with indices into `jobs`, most urgent first. A
// policy may leave jobs out (they are not started this round), and may stop
// after ClusterView::rank_limit jobs when it is > 0 (a caller that needs more
// ranks the rest again).
class PlacementPolicy;
class OrderingPolicy {
 public:
  virtual ~OrderingPolicy() = default;
  virtual std::string name() const = 0;
  virtual void rank(std::span<const JobView> jobs, const ClusterView& cluster, std::vector<size_t>& order) = 0;
  // Strict head-of-line blocking: stop at the first ranked job that cannot start.
  virtual bool blocking() const { return false; }
  // Running jobs are ranked with pending ones and may be preempted.
  virtual bool preemptive() const { return false; }
  // Ranks by arrival order only (lets the caller skip rank() on long queues).
  virtual bool arrival_order() const { return false; }
  // Uses oracle_* fields: a reference bound, not a competitor.
  virtual bool oracle() const { return false; }
  // Told when a job finishes (e.g. to learn durations from history).
  virtual void on_finish(const JobView& /*job*/, double /*run_s*/) {}
  // When the ranking changes with no arrival or completion (e.g. a job reaches
  // a queue's limit), as of the last rank(): a time in trace seconds after
  // ClusterView::now_s, or kUnknown. The simulator adds a decision point then.
  virtual double next_decision_s() const { return kUnknown; }
  // Told which placement policy it works with (Simulator::set_policies), so
  // agents that exchange messages can find their peer; ignored by default.
  virtual void pair_with(PlacementPolicy& /*placement*/) {}
};

// Chooses machines and GPU counts for one job, or nothing (job waits).
class PlacementPolicy {
 public:
  virtual ~PlacementPolicy() = default;
  virtual std::string name() const = 0;
  virtual std::optional<Placement> place(const JobView& job, const ClusterView& cluster) = 0;
  // Told when a job finishes (e.g. to learn machine performance from how fast
  // the jobs it placed ran). run_s: wall seconds run, all attempts.
  virtual void on_finish(const JobView& /*job*/, double /*run_s*/) {}
};

// A policy that decides order and placement together (e.g. a learned agent).
struct Decision {
  size_t job = 0;  // index into the pending jobs given
  Placement placement;
};
class JointPolicy {
 public:
  virtual ~JointPolicy() = default;
  virtual std::string name() const = 0;
  // Jobs to start now; decisions are applied in order, each must fit.
  virtual std::vector<Decision> decide(std::span<const JobView> pending, const ClusterView& cluster) = 0;
  virtual void on_finish(const JobView& /*job*/, double /*run_s*/) {}
};

}  // namespace duet
