// Online GP over machine performance f(machine, job type), the placement
// agent's model of "how fast is this machine for this kind of job, and how
// sure are we". See duet-model(5) for the kernel and the update rules.
//
//   k((i,s), (j,t)) = sigma_f^2 * K_m(i, j) * K_t(s, t)
//   K_t(s, t) = 1 if s == t else rho
//   y = f(machine, type) + eps,  eps ~ N(0, sigma_n^2)
//
// Observations live in a FIFO window of at most Options::window entries.
// Posterior mean and variance of f for every (machine, job type) are cached
// and kept current by exact rank-one updates (add an observation, drop the
// oldest), O(M * distinct machines * types) each; an exact recomputation
// every Options::refresh_every updates bounds rounding drift.
//
// Not thread-safe: serialise observe()/set_hyper()/refresh() against readers
// (a Slurm plugin holds its own lock). Reads (mean, var, means, vars) are O(1).
#pragma once

#include <Eigen/Core>
#include <cstdint>
#include <deque>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "policy/learn/gp/gp_hyper.h"
#include "policy/learn/gp/machine_graph.h"
#include "policy/learn/gp/machine_kernel.h"

namespace duet::learn {

// One measurement. value = log(measured speed / speed the performance model
// expected), so 0 is "as expected" and -0.1 is about 10% slower.
struct GpObservation {
  std::uint32_t machine = 0;   // index into the machine list
  std::uint32_t job_type = 0;  // index < num_job_types; anything else: "other"
  double value = 0.0;
};

class PerformanceGp {
 public:
  struct Options {
    std::size_t window = 256;          // observations kept (FIFO)
    std::size_t refresh_every = 1024;  // exact recompute period (updates)
  };

  // num_job_types known types; one extra slot (index num_job_types) pools
  // observations and queries of unknown types.
  PerformanceGp(std::vector<MachineDesc> machines, std::uint32_t num_job_types, GpHyper hyper, Options opt);
  PerformanceGp(std::vector<MachineDesc> machines, std::uint32_t num_job_types, GpHyper hyper)
      : PerformanceGp(std::move(machines), num_job_types, std::move(hyper), Options{}) {}
  ~PerformanceGp();
  PerformanceGp(PerformanceGp&&) noexcept;
  PerformanceGp& operator=(PerformanceGp&&) noexcept;

  void observe(const GpObservation& o);
  void observe(std::span<const GpObservation> obs);

  std::size_t num_machines() const { return machines_.size(); }
  std::uint32_t num_job_types() const { return num_types_; }
  std::uint32_t type_slot(std::uint32_t job_type) const { return job_type < num_types_ ? job_type : num_types_; }

  // Posterior of f (noise excluded). O(1); spans hold one value per machine.
  double mean(std::uint32_t machine, std::uint32_t job_type) const { return mean_(machine, type_slot(job_type)); }
  double var(std::uint32_t machine, std::uint32_t job_type) const { return var_(machine, type_slot(job_type)); }
  std::span<const double> means(std::uint32_t job_type) const;
  std::span<const double> vars(std::uint32_t job_type) const;

  const GpHyper& hyper() const { return hyper_; }
  const Options& options() const { return opt_; }
  const std::vector<MachineDesc>& machines() const { return machines_; }
  const MachineGraph& graph() const { return *graph_; }
  const MachineKernel* kernel() const { return kernel_.get(); }  // nullptr for none
  const std::deque<GpObservation>& window() const { return window_; }

  // New hyper-parameters: rebuilds the kernel and recomputes exactly.
  void set_hyper(const GpHyper& h);
  // Exact recomputation of the posterior from the window.
  void refresh();
  // Learned-similarity edges from the long-term per-machine residual means
  // (every observation ever seen, shrunk towards 0); then refresh().
  void rebuild_similarity();
  // Log marginal likelihood of the window under the current hyper-parameters.
  double log_marginal_likelihood() const;

  // Long-term statistics (all observations, not only the window):
  // sum and count of values per machine (rows) and type slot (columns).
  const Eigen::MatrixXd& long_term_sum() const { return lt_sum_; }
  const Eigen::MatrixXd& long_term_count() const { return lt_cnt_; }
  // Replaces window and long-term statistics (state loading), then refresh().
  void restore(std::deque<GpObservation> window, Eigen::MatrixXd lt_sum, Eigen::MatrixXd lt_cnt);
  // New values for the window's observations, in window order (the same
  // machines and types): the posterior mean follows exactly; the variance,
  // which does not depend on the values, stays. The long-term statistics
  // are left alone (no new observation). O(n^2 + M n) for n observations.
  // Throws std::invalid_argument for a wrong count or a value not finite.
  void set_values(std::span<const double> values);

 private:
  std::uint32_t acquire_slot(std::uint32_t machine);
  void release_slot(std::uint32_t machine);
  // sum_a w_a K_m(:, I_a) K_t(:, T_a)^T over the window (M x type slots)
  Eigen::MatrixXd grid_product(const Eigen::VectorXd& w) const;
  double kt(std::uint32_t s, std::uint32_t t) const { return s == t ? 1.0 : hyper_.type_corr; }
  void add(const GpObservation& o);
  void drop_oldest();
  void rebuild_kernel();
  void reset_posterior_to_prior();

  std::vector<MachineDesc> machines_;
  std::uint32_t num_types_;  // slots: num_types_ + 1
  GpHyper hyper_;
  Options opt_;
  std::unique_ptr<MachineGraph> graph_;  // heap: the kernel points into it
  std::unique_ptr<MachineKernel> kernel_;

  std::deque<GpObservation> window_;  // job_type already mapped to a slot
  Eigen::MatrixXd cinv_;              // (K_xx + sigma_n^2 I)^-1, window order
  // Kernel columns of the machines in the window: kcols_.col(slot).
  Eigen::MatrixXd kcols_;
  std::vector<std::int32_t> slot_of_;  // per machine, -1 if none
  std::vector<std::uint32_t> slot_machine_, slot_refs_, free_slots_;
  std::uint32_t slots_used_ = 0;  // high-water mark
  Eigen::MatrixXd mean_, var_;    // M x (num_types_ + 1)
  Eigen::MatrixXd lt_sum_, lt_cnt_;
  std::size_t since_refresh_ = 0;
};

}  // namespace duet::learn
