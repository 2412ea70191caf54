#include "policy/learn/gp/performance_gp.h"

#include <Eigen/Cholesky>
#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "policy/learn/gp/gp_likelihood.h"

namespace duet::learn {

PerformanceGp::PerformanceGp(std::vector<MachineDesc> machines, std::uint32_t num_job_types, GpHyper hyper, Options opt)
    : machines_(std::move(machines)), num_types_(num_job_types), hyper_(std::move(hyper)), opt_(opt) {
  hyper_.validate();
  if (machines_.empty()) throw std::invalid_argument("performance GP: no machines");
  if (opt_.window == 0) throw std::invalid_argument("performance GP: window must be >= 1");
  if (opt_.refresh_every == 0) opt_.refresh_every = opt_.window;
  graph_ = std::make_unique<MachineGraph>(machines_, hyper_.graph);
  const auto m = static_cast<Eigen::Index>(machines_.size());
  lt_sum_ = Eigen::MatrixXd::Zero(m, num_types_ + 1);
  lt_cnt_ = Eigen::MatrixXd::Zero(m, num_types_ + 1);
  rebuild_kernel();
  refresh();
}

PerformanceGp::~PerformanceGp() = default;
PerformanceGp::PerformanceGp(PerformanceGp&&) noexcept = default;
PerformanceGp& PerformanceGp::operator=(PerformanceGp&&) noexcept = default;

std::span<const double> PerformanceGp::means(std::uint32_t job_type) const {
  return {mean_.col(type_slot(job_type)).data(), machines_.size()};
}
std::span<const double> PerformanceGp::vars(std::uint32_t job_type) const {
  return {var_.col(type_slot(job_type)).data(), machines_.size()};
}

void PerformanceGp::rebuild_kernel() {
  graph_->set_weights(hyper_.graph);
  kernel_ = make_machine_kernel(hyper_, *graph_, machines_);
  // every cached column is stale
  const auto m = static_cast<Eigen::Index>(machines_.size());
  kcols_.resize(m, static_cast<Eigen::Index>(std::min(opt_.window, machines_.size())));
  slot_of_.assign(machines_.size(), -1);
  slot_machine_.clear();
  slot_refs_.clear();
  free_slots_.clear();
  slots_used_ = 0;
  if (kernel_)
    for (const auto& o : window_) acquire_slot(o.machine);
}

std::uint32_t PerformanceGp::acquire_slot(std::uint32_t machine) {
  if (slot_of_[machine] >= 0) {
    auto s = static_cast<std::uint32_t>(slot_of_[machine]);
    ++slot_refs_[s];
    return s;
  }
  std::uint32_t s;
  if (!free_slots_.empty()) {
    s = free_slots_.back();
    free_slots_.pop_back();
  } else {
    s = slots_used_++;
    slot_machine_.push_back(0);
    slot_refs_.push_back(0);
  }
  slot_machine_[s] = machine;
  slot_refs_[s] = 1;
  slot_of_[machine] = static_cast<std::int32_t>(s);
  Eigen::MatrixXd col;
  kernel_->columns({machine}, col);
  kcols_.col(s) = col.col(0);
  return s;
}

void PerformanceGp::release_slot(std::uint32_t machine) {
  auto s = static_cast<std::uint32_t>(slot_of_[machine]);
  if (--slot_refs_[s] == 0) {
    slot_of_[machine] = -1;
    free_slots_.push_back(s);
    kcols_.col(s).setZero();  // so grid_product can include the slot harmlessly
  }
}

Eigen::MatrixXd PerformanceGp::grid_product(const Eigen::VectorXd& w) const {
  // K_t = rho 11^T + (1 - rho) I splits the product into a part shared by all
  // types and a part for each (machine, type) pair seen in the window:
  // O(M * (slots + pairs)), and each cached kernel column is read from memory
  // once (the updates below reuse it from cache).
  const double rho = hyper_.type_corr;
  const Eigen::Index nt = num_types_ + 1;
  Eigen::VectorXd per_slot = Eigen::VectorXd::Zero(slots_used_);
  Eigen::MatrixXd per_type = Eigen::MatrixXd::Zero(nt, slots_used_);
  Eigen::Index a = 0;
  for (const auto& o : window_) {
    per_slot[slot_of_[o.machine]] += w[a];
    per_type(o.job_type, slot_of_[o.machine]) += (1.0 - rho) * w[a];
    ++a;
  }
  Eigen::MatrixXd out = Eigen::MatrixXd::Zero(kcols_.rows(), nt);
  Eigen::VectorXd shared = Eigen::VectorXd::Zero(kcols_.rows());
  for (Eigen::Index s = 0; s < static_cast<Eigen::Index>(slots_used_); ++s) {
    if (per_slot[s] == 0.0 && per_type.col(s).isZero(0.0)) continue;
    const auto k = kcols_.col(s);
    shared += (rho * per_slot[s]) * k;
    for (Eigen::Index t = 0; t < nt; ++t)
      if (per_type(t, s) != 0.0) out.col(t) += per_type(t, s) * k;
  }
  out.colwise() += shared;
  return out;
}

void PerformanceGp::reset_posterior_to_prior() {
  const auto m = static_cast<Eigen::Index>(machines_.size());
  mean_ = Eigen::MatrixXd::Constant(m, num_types_ + 1, hyper_.prior_mean);
  var_ = Eigen::MatrixXd::Constant(m, num_types_ + 1, hyper_.signal_var);
}

void PerformanceGp::observe(std::span<const GpObservation> obs) {
  for (const auto& o : obs) observe(o);
}

void PerformanceGp::observe(const GpObservation& in) {
  if (in.machine >= machines_.size())
    throw std::out_of_range("performance GP: observation for machine " + std::to_string(in.machine) + ", only " +
                            std::to_string(machines_.size()) + " machines");
  if (!std::isfinite(in.value)) throw std::invalid_argument("performance GP: observation value is not finite");
  GpObservation o = in;
  o.job_type = type_slot(in.job_type);
  lt_sum_(o.machine, o.job_type) += o.value;
  lt_cnt_(o.machine, o.job_type) += 1;
  if (!kernel_) return;  // "no GP" ablation: nothing to learn
  if (window_.size() >= opt_.window) drop_oldest();
  add(o);
  if (++since_refresh_ >= opt_.refresh_every) refresh();
}

void PerformanceGp::add(const GpObservation& o) {
  const double sf2 = hyper_.signal_var;
  const auto n = static_cast<Eigen::Index>(window_.size());
  const std::uint32_t s_new = acquire_slot(o.machine);
  Eigen::VectorXd kx(n);
  Eigen::Index a = 0;
  for (const auto& w : window_) { kx[a++] = sf2 * kcols_(w.machine, s_new) * kt(w.job_type, o.job_type); }
  Eigen::VectorXd beta = cinv_ * kx;
  const double s = std::max(sf2 + hyper_.noise_var - kx.dot(beta), 1e-12);
  // posterior covariance of every grid point with the new point
  Eigen::RowVectorXd ktrow(num_types_ + 1);
  for (std::uint32_t t = 0; t <= num_types_; ++t) ktrow[t] = kt(t, o.job_type);
  Eigen::MatrixXd cov = kcols_.col(s_new) * ktrow;
  if (n > 0) cov -= grid_product(beta);
  cov *= sf2;
  const double resid = o.value - mean_(o.machine, o.job_type);
  mean_ += cov * (resid / s);
  var_ -= cov.cwiseAbs2() / s;
  var_ = var_.cwiseMax(0.0);
  // block inverse of the grown matrix
  Eigen::MatrixXd c(n + 1, n + 1);
  c.topLeftCorner(n, n) = cinv_ + beta * beta.transpose() / s;
  c.topRightCorner(n, 1) = -beta / s;
  c.bottomLeftCorner(1, n) = -beta.transpose() / s;
  c(n, n) = 1.0 / s;
  cinv_ = std::move(c);
  window_.push_back(o);
}

void PerformanceGp::drop_oldest() {
  const auto n = static_cast<Eigen::Index>(window_.size());
  Eigen::VectorXd y(n);
  Eigen::Index a = 0;
  for (const auto& w : window_) y[a++] = w.value - hyper_.prior_mean;
  const Eigen::VectorXd c0 = cinv_.col(0);
  const double c00 = c0[0];
  const double alpha0 = c0.dot(y);
  // u_q = k_q^T C e_0; removing the point adds u^2 / c00 to the variance and
  // subtracts u * alpha_0 / c00 from the mean (partitioned inverse).
  Eigen::MatrixXd u = hyper_.signal_var * grid_product(c0);
  mean_ -= u * (alpha0 / c00);
  var_ += u.cwiseAbs2() / c00;
  var_ = var_.cwiseMin(hyper_.signal_var);
  Eigen::MatrixXd c = cinv_.bottomRightCorner(n - 1, n - 1) - c0.tail(n - 1) * c0.tail(n - 1).transpose() / c00;
  cinv_ = std::move(c);
  release_slot(window_.front().machine);
  window_.pop_front();
}

void PerformanceGp::refresh() {
  since_refresh_ = 0;
  reset_posterior_to_prior();
  const auto n = static_cast<Eigen::Index>(window_.size());
  if (!kernel_ || n == 0) {
    cinv_.resize(0, 0);
    return;
  }
  const double sf2 = hyper_.signal_var;
  Eigen::MatrixXd kxx(n, n);
  Eigen::VectorXd y(n);
  Eigen::Index a = 0;
  for (const auto& wa : window_) {
    Eigen::Index b = 0;
    const auto sa = static_cast<Eigen::Index>(slot_of_[wa.machine]);
    for (const auto& wb : window_) {
      kxx(b, a) = sf2 * kcols_(wb.machine, sa) * kt(wb.job_type, wa.job_type);
      ++b;
    }
    y[a] = wa.value - hyper_.prior_mean;
    ++a;
  }
  kxx = 0.5 * (kxx + kxx.transpose());
  kxx.diagonal().array() += hyper_.noise_var;
  Eigen::LLT<Eigen::MatrixXd> llt(kxx);
  if (llt.info() != Eigen::Success) throw std::runtime_error("performance GP: kernel matrix not positive definite");
  cinv_ = llt.solve(Eigen::MatrixXd::Identity(n, n));
  const Eigen::VectorXd alpha = cinv_ * y;
  mean_.array() += sf2 * grid_product(alpha).array();
  // var(j, t) = sf2 - sf2^2 r_j^T D_t C D_t r_j, r_j = K_m(j, I), D_t = diag(K_t(t, T)).
  // With D_t = rho I + (1 - rho) U_t (U_t: indicator of observations of type t):
  //   r^T D C D r = rho^2 r^T C r + 2 rho (1 - rho) sum_{a in t} (C r)_a r_a
  //               + (1 - rho)^2 r_t^T C_tt r_t
  // One M x n x n product for all types, plus one per type on its own block.
  const double rho = hyper_.type_corr;
  Eigen::MatrixXd kobs(mean_.rows(), n);  // K_m(:, I_a)
  a = 0;
  for (const auto& w : window_) kobs.col(a++) = kcols_.col(slot_of_[w.machine]);
  const Eigen::MatrixXd p = (kobs * cinv_).cwiseProduct(kobs);  // (C r)_a r_a
  Eigen::MatrixXd quad = Eigen::MatrixXd::Zero(mean_.rows(), num_types_ + 1);
  quad.colwise() += (rho * rho) * p.rowwise().sum();
  std::vector<std::vector<Eigen::Index>> of_type(num_types_ + 1);
  a = 0;
  for (const auto& w : window_) {
    quad.col(w.job_type) += (2 * rho * (1 - rho)) * p.col(a);
    of_type[w.job_type].push_back(a++);
  }
  for (std::uint32_t t = 0; t <= num_types_; ++t) {
    const auto& ix = of_type[t];
    if (ix.empty()) continue;
    const auto nt = static_cast<Eigen::Index>(ix.size());
    Eigen::MatrixXd kt_obs(mean_.rows(), nt), ctt(nt, nt);
    for (Eigen::Index i = 0; i < nt; ++i) {
      kt_obs.col(i) = kobs.col(ix[static_cast<std::size_t>(i)]);
      for (Eigen::Index j = 0; j < nt; ++j)
        ctt(i, j) = cinv_(ix[static_cast<std::size_t>(i)], ix[static_cast<std::size_t>(j)]);
    }
    quad.col(t) += ((1 - rho) * (1 - rho)) * (kt_obs * ctt).cwiseProduct(kt_obs).rowwise().sum();
  }
  var_ = (Eigen::MatrixXd::Constant(mean_.rows(), num_types_ + 1, sf2) - (sf2 * sf2) * quad).cwiseMax(0.0);
}

void PerformanceGp::set_hyper(const GpHyper& h) {
  h.validate();
  hyper_ = h;
  rebuild_kernel();
  refresh();
}

void PerformanceGp::rebuild_similarity() {
  if (hyper_.kind != KernelKind::random_walk) return;
  const auto m = static_cast<Eigen::Index>(machines_.size());
  // embedding: per type slot, the residual mean shrunk by n / (n + 2)
  Eigen::MatrixXd emb = Eigen::MatrixXd::Zero(m, num_types_ + 1);
  std::vector<bool> valid(machines_.size());
  for (Eigen::Index i = 0; i < m; ++i) {
    double total = lt_cnt_.row(i).sum();
    valid[static_cast<std::size_t>(i)] = total >= hyper_.sim_min_obs;
    for (Eigen::Index t = 0; t < lt_cnt_.cols(); ++t) {
      double c = lt_cnt_(i, t);
      if (c > 0) emb(i, t) = (lt_sum_(i, t) / c) * (c / (c + 2.0));
    }
  }
  graph_->set_similarity(emb, valid, static_cast<int>(hyper_.sim_k), hyper_.sim_lengthscale);
  rebuild_kernel();
  refresh();
}

double PerformanceGp::log_marginal_likelihood() const {
  if (!kernel_) return 0.0;
  std::vector<GpObservation> obs(window_.begin(), window_.end());
  return duet::learn::log_marginal_likelihood(*kernel_, hyper_, obs);
}

void PerformanceGp::restore(std::deque<GpObservation> window, Eigen::MatrixXd lt_sum, Eigen::MatrixXd lt_cnt) {
  if (lt_sum.rows() != lt_sum_.rows() || lt_sum.cols() != lt_sum_.cols() || lt_cnt.rows() != lt_cnt_.rows() ||
      lt_cnt.cols() != lt_cnt_.cols())
    throw std::invalid_argument("performance GP restore: long-term statistics have the wrong shape");
  while (window.size() > opt_.window) window.pop_front();
  for (auto& o : window) {
    if (o.machine >= machines_.size()) throw std::out_of_range("performance GP restore: machine index out of range");
    o.job_type = type_slot(o.job_type);
  }
  window_ = std::move(window);
  lt_sum_ = std::move(lt_sum);
  lt_cnt_ = std::move(lt_cnt);
  rebuild_kernel();
  refresh();
}

void PerformanceGp::set_values(std::span<const double> values) {
  if (values.size() != window_.size())
    throw std::invalid_argument("performance GP: " + std::to_string(values.size()) + " values for " +
                                std::to_string(window_.size()) + " observations");
  for (double v : values)
    if (!std::isfinite(v)) throw std::invalid_argument("performance GP: observation value is not finite");
  const auto n = static_cast<Eigen::Index>(window_.size());
  Eigen::VectorXd y(n);
  Eigen::Index a = 0;
  for (auto& o : window_) {
    o.value = values[static_cast<std::size_t>(a)];
    y[a++] = o.value - hyper_.prior_mean;
  }
  mean_.setConstant(hyper_.prior_mean);
  if (!kernel_ || n == 0) return;
  mean_.array() += hyper_.signal_var * grid_product(cinv_ * y).array();
}

}  // namespace duet::learn
