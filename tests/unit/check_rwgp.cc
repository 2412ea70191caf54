// Unit tests of the machine-performance GP (policy/learn): random walk kernel,
// posterior against an explicit closed form, online window updates, fitting,
// state save/load.
#include <Eigen/Dense>
#include <cmath>
#include <cstdio>
#include <deque>
#include <fstream>
#include <random>
#include <string>
#include <unistd.h>
#include <vector>

#include "policy/learn/gp/binary_io.h"
#include "policy/learn/gp/gp_fit.h"
#include "policy/learn/gp/gp_likelihood.h"
#include "policy/learn/gp/gp_state_io.h"
#include "policy/learn/gp/machine_kernel.h"
#include "policy/learn/gp/performance_gp.h"

#include <check.h>  // last: it defines a fail() macro

using namespace duet::learn;

namespace {

// m0, m1: type A rack r1; m2: type A rack r2; m3: type B rack r2.
std::vector<MachineDesc> four_machines() {
  return {{"m0", "A", "r1", {1.0}}, {"m1", "A", "r1", {1.1}}, {"m2", "A", "r2", {0.9}}, {"m3", "B", "r2", {2.0}}};
}

GpHyper four_hyper() {
  GpHyper h;
  h.kind = KernelKind::random_walk;
  h.beta = 0.4;
  h.walk_weights = {0.1, 0.5, 0.4};
  h.graph = {1.0, 0.5, 1.0};
  h.signal_var = 0.04;
  h.noise_var = 0.01;
  h.type_corr = 0.3;
  h.prior_mean = 0.05;
  return h;
}

// The machine kernel of four_machines()/four_hyper(), computed by hand:
// A written out entry by entry (w_type = 1, w_rack = 0.5, unit self-loop).
Eigen::MatrixXd four_kernel_closed_form() {
  Eigen::Matrix4d a;
  a << 2.5, 1.5, 1.0, 0.0, 1.5, 2.5, 1.0, 0.0, 1.0, 1.0, 2.5, 0.5, 0.0, 0.0, 0.5, 2.5;
  Eigen::Vector4d d = a.rowwise().sum();
  Eigen::Matrix4d dm = d.cwiseSqrt().cwiseInverse().asDiagonal();
  Eigen::Matrix4d ahat = dm * a * dm;
  Eigen::Matrix4d s = 0.6 * Eigen::Matrix4d::Identity() + 0.4 * ahat;
  Eigen::Matrix4d r = 0.1 * Eigen::Matrix4d::Identity() + 0.5 * s + 0.4 * s * s;
  Eigen::Matrix4d n = r.diagonal().cwiseSqrt().cwiseInverse().asDiagonal();
  return n * r * n;
}

struct Posterior {
  Eigen::MatrixXd mean, var;  // machines x type slots
};

// Textbook GP posterior with an explicit inverse (no Cholesky, no updates).
Posterior closed_form_posterior(const Eigen::MatrixXd& km, const GpHyper& h, const std::vector<GpObservation>& obs,
                                int slots) {
  const int n = static_cast<int>(obs.size());
  auto kt = [&](std::uint32_t s, std::uint32_t t) { return s == t ? 1.0 : h.type_corr; };
  Eigen::MatrixXd k(n, n);
  Eigen::VectorXd y(n);
  for (int a = 0; a < n; ++a) {
    for (int b = 0; b < n; ++b)
      k(a, b) = h.signal_var * km(obs[a].machine, obs[b].machine) * kt(obs[a].job_type, obs[b].job_type);
    k(a, a) += h.noise_var;
    y[a] = obs[a].value - h.prior_mean;
  }
  Eigen::MatrixXd kinv = k.inverse();
  Posterior p{Eigen::MatrixXd(km.rows(), slots), Eigen::MatrixXd(km.rows(), slots)};
  for (int j = 0; j < km.rows(); ++j)
    for (int t = 0; t < slots; ++t) {
      Eigen::VectorXd ks(n);
      for (int a = 0; a < n; ++a) ks[a] = h.signal_var * km(j, obs[a].machine) * kt(t, obs[a].job_type);
      p.mean(j, t) = h.prior_mean + ks.dot(kinv * y);
      p.var(j, t) = h.signal_var - ks.dot(kinv * ks);
    }
  return p;
}

void expect_matches(const PerformanceGp& gp, const Posterior& p, double tol) {
  for (int j = 0; j < p.mean.rows(); ++j)
    for (int t = 0; t < p.mean.cols(); ++t) {
      ck_assert_msg(std::abs(gp.mean(j, t) - p.mean(j, t)) < tol, "mean(%d,%d) = %.12g, closed form %.12g", j, t,
                    gp.mean(j, t), p.mean(j, t));
      ck_assert_msg(std::abs(gp.var(j, t) - p.var(j, t)) < tol, "var(%d,%d) = %.12g, closed form %.12g", j, t,
                    gp.var(j, t), p.var(j, t));
    }
}

Eigen::MatrixXd dense_kernel(const MachineKernel& k) {
  std::vector<std::uint32_t> all(k.size());
  for (std::size_t i = 0; i < all.size(); ++i) all[i] = static_cast<std::uint32_t>(i);
  Eigen::MatrixXd out;
  k.columns(all, out);
  return out;
}

std::vector<MachineDesc> random_cluster(int n, std::uint32_t seed) {
  std::mt19937 rng(seed);
  const char* types[] = {"V100", "P100", "T4", "A100"};
  std::vector<MachineDesc> ms;
  for (int i = 0; i < n; ++i)
    ms.push_back({"n" + std::to_string(i),
                  types[rng() % 4],
                  (rng() % 5 == 0) ? "" : "rack" + std::to_string(rng() % 6),
                  {std::uniform_real_distribution<>(0.5, 2.0)(rng), double(rng() % 6)}});
  return ms;
}

std::string temp_path(const char* tag) { return "/tmp/check_rwgp_" + std::to_string(getpid()) + "_" + tag; }

}  // namespace

START_TEST(kernel_matches_hand_computation) {
  auto ms = four_machines();
  MachineGraph g(ms, four_hyper().graph);
  RandomWalkKernel k(g, 0.4, {0.1, 0.5, 0.4});
  Eigen::MatrixXd got = dense_kernel(k), want = four_kernel_closed_form();
  ck_assert_msg((got - want).cwiseAbs().maxCoeff() < 1e-12, "kernel differs from hand computation by %g",
                (got - want).cwiseAbs().maxCoeff());
  std::vector<std::uint32_t> idx = {3, 0, 2};
  Eigen::MatrixXd sub = k.submatrix(idx);
  for (int a = 0; a < 3; ++a)
    for (int b = 0; b < 3; ++b) ck_assert(std::abs(sub(a, b) - want(idx[a], idx[b])) < 1e-12);
}
END_TEST

START_TEST(kernel_is_psd) {
  for (std::uint32_t seed = 1; seed <= 4; ++seed) {
    auto ms = random_cluster(40, seed);
    MachineGraph g(ms, {1.0, 0.7, 1.0});
    // learned-similarity edges from random embeddings
    Eigen::MatrixXd emb = Eigen::MatrixXd::Random(40, 3);
    std::vector<bool> valid(40, true);
    valid[3] = valid[7] = false;
    g.set_similarity(emb, valid, 5, 0.5);
    ck_assert(g.similarity_edges() > 0);
    for (double beta : {0.05, 0.3, 0.5}) {
      for (auto w : std::vector<std::vector<double>>{{1}, {0, 0, 0, 1}, {0.2, 0.3, 0.5}, {0, 1}}) {
        RandomWalkKernel k(g, beta, w);
        Eigen::MatrixXd km = dense_kernel(k);
        ck_assert((km - km.transpose()).cwiseAbs().maxCoeff() < 1e-12);
        double lo = Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd>(km).eigenvalues().minCoeff();
        ck_assert_msg(lo >= -1e-9, "min eigenvalue %g (seed %u beta %g)", lo, seed, beta);
        ck_assert(std::abs(km.diagonal().minCoeff() - 1) < 1e-12 && std::abs(km.diagonal().maxCoeff() - 1) < 1e-12);
      }
    }
    RbfKernel rbf(ms, 0.7);
    double lo = Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd>(dense_kernel(rbf)).eigenvalues().minCoeff();
    ck_assert_msg(lo >= -1e-9, "rbf min eigenvalue %g", lo);
  }
}
END_TEST

START_TEST(posterior_matches_closed_form) {
  const GpHyper h = four_hyper();
  PerformanceGp gp(four_machines(), 2, h);
  std::vector<GpObservation> obs = {{0, 0, 0.10}, {1, 0, 0.07}, {0, 1, -0.02},
                                    {2, 0, 0.03}, {0, 0, 0.12}, {3, 7, -0.2}};
  // prior
  expect_matches(gp, closed_form_posterior(four_kernel_closed_form(), h, {}, 3), 1e-14);
  std::vector<GpObservation> seen;
  for (auto o : obs) {
    gp.observe(o);                                        // incremental rank-one updates
    o.job_type = std::min<std::uint32_t>(o.job_type, 2);  // unknown type 7 -> "other" slot 2
    seen.push_back(o);
    expect_matches(gp, closed_form_posterior(four_kernel_closed_form(), h, seen, 3), 1e-10);
  }
  gp.refresh();  // exact path
  expect_matches(gp, closed_form_posterior(four_kernel_closed_form(), h, seen, 3), 1e-10);
  // the spans expose the same cache
  ck_assert(gp.means(1)[2] == gp.mean(2, 1) && gp.vars(9)[3] == gp.var(3, 2));
}
END_TEST

// set_values: the same posterior as observing the new values from scratch;
// with one observation per machine in one slot, the posterior mean is a
// contraction of the values (select/duet's bound, placement_model.cc): no
// machine's mean moves by more than the sum of the values' moves.
START_TEST(set_values_matches_closed_form_and_contracts) {
  const GpHyper h = four_hyper();
  PerformanceGp gp(four_machines(), 2, h);
  std::deque<GpObservation> w;
  for (std::uint32_t m = 0; m < 4; ++m) w.push_back({m, 2, 0.0});
  const auto shape = Eigen::MatrixXd::Zero(4, 3);
  gp.restore(w, shape, shape);
  Eigen::MatrixXd v0(4, 3);
  for (std::uint32_t j = 0; j < 4; ++j)
    for (std::uint32_t t = 0; t < 3; ++t) v0(j, t) = gp.var(j, t);
  const std::vector<double> values = {0.3, -0.2, 0.05, 1.5};
  gp.set_values(values);
  std::vector<GpObservation> obs(w.begin(), w.end());
  for (std::size_t m = 0; m < 4; ++m) obs[m].value = values[m];
  expect_matches(gp, closed_form_posterior(four_kernel_closed_form(), h, obs, 3), 1e-10);
  for (std::uint32_t j = 0; j < 4; ++j)
    for (std::uint32_t t = 0; t < 3; ++t) ck_assert(gp.var(j, t) == v0(j, t));
  // one value moved by d: every mean moves by less than |d|
  std::mt19937 rng(5);
  std::uniform_real_distribution<> u(-1, 1);
  for (int k = 0; k < 200; ++k) {
    std::vector<double> a(4), b(4);
    for (auto& x : a) x = u(rng);
    b = a;
    const std::size_t which = rng() % 4;
    b[which] += u(rng);
    gp.set_values(a);
    double ma[4][3];
    for (std::uint32_t j = 0; j < 4; ++j)
      for (std::uint32_t t = 0; t < 3; ++t) ma[j][t] = gp.mean(j, t);
    gp.set_values(b);
    for (std::uint32_t j = 0; j < 4; ++j)
      for (std::uint32_t t = 0; t < 3; ++t)
        ck_assert_msg(std::abs(gp.mean(j, t) - ma[j][t]) <= std::abs(b[which] - a[which]) + 1e-12,
                      "mean(%u,%u) moved %g for a move of %g", j, t, gp.mean(j, t) - ma[j][t], b[which] - a[which]);
  }
  // wrong count, not finite
  const std::vector<double> three = {0, 0, 0}, nan = {0, 0, 0, std::nan("")};
  for (const auto* bad : {&three, &nan}) {
    try {
      gp.set_values(*bad);
      ck_abort_msg("bad values accepted");
    } catch (const std::invalid_argument&) {
    }
  }
}
END_TEST

START_TEST(window_drops_oldest_exactly) {
  const GpHyper h = four_hyper();
  PerformanceGp::Options opt;
  opt.window = 3;
  opt.refresh_every = 1000;  // only incremental updates and downdates
  PerformanceGp gp(four_machines(), 2, h, opt);
  std::vector<GpObservation> obs = {{0, 0, 0.10}, {1, 0, 0.07}, {0, 1, -0.02},
                                    {2, 0, 0.03}, {0, 0, 0.12}, {3, 1, -0.1}};
  for (std::size_t i = 0; i < obs.size(); ++i) {
    gp.observe(obs[i]);
    std::vector<GpObservation> last(obs.begin() + static_cast<long>(i >= 2 ? i - 2 : 0),
                                    obs.begin() + static_cast<long>(i) + 1);
    ck_assert_uint_eq(gp.window().size(), last.size());
    expect_matches(gp, closed_form_posterior(four_kernel_closed_form(), h, last, 3), 1e-10);
  }
}
END_TEST

START_TEST(incremental_updates_do_not_drift) {
  auto ms = random_cluster(60, 7);
  GpHyper h;
  h.walk_weights = {0.2, 0.4, 0.4};
  PerformanceGp::Options opt;
  opt.window = 24;
  opt.refresh_every = 100000;
  PerformanceGp gp(ms, 3, h, opt);
  std::mt19937 rng(11);
  std::normal_distribution<> noise(0, 0.05);
  for (int i = 0; i < 600; ++i)
    gp.observe({static_cast<std::uint32_t>(rng() % 60), static_cast<std::uint32_t>(rng() % 4), noise(rng)});
  Eigen::MatrixXd m0(60, 4), v0(60, 4);
  for (std::uint32_t j = 0; j < 60; ++j)
    for (std::uint32_t t = 0; t < 4; ++t) m0(j, t) = gp.mean(j, t), v0(j, t) = gp.var(j, t);
  gp.refresh();
  double dm = 0, dv = 0;
  for (std::uint32_t j = 0; j < 60; ++j)
    for (std::uint32_t t = 0; t < 4; ++t) {
      dm = std::max(dm, std::abs(m0(j, t) - gp.mean(j, t)));
      dv = std::max(dv, std::abs(v0(j, t) - gp.var(j, t)));
    }
  ck_assert_msg(dm < 1e-8 && dv < 1e-8, "drift after 600 updates: mean %g var %g", dm, dv);
}
END_TEST

START_TEST(variance_shrinks_where_observations_are_dense) {
  // 2 GPU types x 2 racks x 5 machines
  std::vector<MachineDesc> ms;
  for (int i = 0; i < 20; ++i)
    ms.push_back({"n" + std::to_string(i), i < 10 ? "V100" : "T4", (i / 5) % 2 ? "r1" : "r0", {}});
  GpHyper h;
  PerformanceGp gp(ms, 1, h);
  double prev = gp.var(0, 0);
  ck_assert(std::abs(prev - h.signal_var) < 1e-15);
  for (int i = 0; i < 12; ++i) {
    gp.observe({0, 0, -0.1});
    ck_assert_msg(gp.var(0, 0) < prev, "variance at the observed machine did not shrink");
    prev = gp.var(0, 0);
  }
  const double observed = gp.var(0, 0), same_rack_type = gp.var(1, 0), same_type = gp.var(6, 0), other = gp.var(15, 0);
  ck_assert_msg(observed < same_rack_type && same_rack_type < same_type && same_type < other,
                "variance ordering wrong: %g %g %g %g", observed, same_rack_type, same_type, other);
  ck_assert(other <= h.signal_var + 1e-15);
  // and the mean moved towards the data where observations are, most
  ck_assert(gp.mean(0, 0) < gp.mean(1, 0) && gp.mean(1, 0) < gp.mean(15, 0));
}
END_TEST

START_TEST(likelihood_matches_closed_form) {
  const GpHyper h = four_hyper();
  PerformanceGp gp(four_machines(), 2, h);
  std::vector<GpObservation> obs = {{0, 0, 0.10}, {1, 0, 0.07}, {0, 1, -0.02}, {3, 0, 0.03}};
  gp.observe(obs);
  Eigen::MatrixXd km = four_kernel_closed_form();
  Eigen::MatrixXd k(4, 4);
  Eigen::VectorXd y(4);
  for (int a = 0; a < 4; ++a) {
    for (int b = 0; b < 4; ++b)
      k(a, b) =
          h.signal_var * km(obs[a].machine, obs[b].machine) * (obs[a].job_type == obs[b].job_type ? 1 : h.type_corr);
    k(a, a) += h.noise_var;
    y[a] = obs[a].value - h.prior_mean;
  }
  double want = -0.5 * y.dot(k.inverse() * y) - 0.5 * std::log(k.determinant()) - 2 * std::log(2 * M_PI);
  ck_assert_msg(std::abs(gp.log_marginal_likelihood() - want) < 1e-10, "lml %.12g, closed form %.12g",
                gp.log_marginal_likelihood(), want);
}
END_TEST

START_TEST(rbf_and_none_variants) {
  GpHyper h = four_hyper();
  h.kind = KernelKind::rbf;
  h.lengthscale = 0.5;
  PerformanceGp gp(four_machines(), 2, h);
  std::vector<GpObservation> obs = {{0, 0, 0.10}, {3, 1, -0.05}};
  gp.observe(obs);
  Eigen::MatrixXd km(4, 4);
  double x[] = {1.0, 1.1, 0.9, 2.0};
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j) km(i, j) = std::exp(-(x[i] - x[j]) * (x[i] - x[j]) / (2 * 0.25));
  expect_matches(gp, closed_form_posterior(km, h, obs, 3), 1e-10);

  h.kind = KernelKind::none;
  PerformanceGp none(four_machines(), 2, h);
  none.observe(obs);
  for (std::uint32_t j = 0; j < 4; ++j) {
    ck_assert(none.mean(j, 0) == h.prior_mean && none.var(j, 1) == h.signal_var);
  }
  ck_assert(none.window().empty() && none.long_term_count().sum() == 2);
}
END_TEST

START_TEST(fit_improves_likelihood) {
  // data drawn from a GP whose truth is "type T4 machines are 15% slow,
  // rack r3 a further 5%", noise sd 0.03
  auto ms = random_cluster(50, 3);
  std::mt19937 rng(5);
  std::normal_distribution<> noise(0, 0.03);
  std::vector<GpObservation> obs;
  for (int i = 0; i < 150; ++i) {
    auto m = static_cast<std::uint32_t>(rng() % 50);
    double f = (ms[m].gpu_type == "T4" ? -0.15 : 0.0) + (ms[m].rack == "rack3" ? -0.05 : 0.0);
    obs.push_back({m, static_cast<std::uint32_t>(rng() % 2), f + noise(rng)});
  }
  GpHyper h;
  h.signal_var = 1.0;
  h.noise_var = 0.5;
  PerformanceGp gp(ms, 2, h);
  FitOptions fo;
  fo.max_evals = 250;
  FitResult r = fit_hyper(gp, obs, fo);
  ck_assert_msg(r.lml_best > r.lml_start + 50, "fit did not improve: %g -> %g", r.lml_start, r.lml_best);
  ck_assert_msg(r.hyper.noise_var > 0.0003 && r.hyper.noise_var < 0.003, "fitted noise var %g, truth 0.0009",
                r.hyper.noise_var);
  r.hyper.validate();
  gp.set_hyper(r.hyper);
  gp.observe(obs);
  // T4 machines are predicted slower than the others
  double t4 = 0, other = 0;
  int nt4 = 0, no = 0;
  for (std::uint32_t j = 0; j < 50; ++j)
    (ms[j].gpu_type == "T4" ? (t4 += gp.mean(j, 0), ++nt4) : (other += gp.mean(j, 0), ++no));
  ck_assert(nt4 > 0 && no > 0 && t4 / nt4 < other / no - 0.08);
}
END_TEST

START_TEST(similarity_edges_from_observations) {
  auto ms = random_cluster(30, 9);
  for (auto& m : ms) m.rack.clear(), m.gpu_type = "V100";  // only learned edges can separate them
  GpHyper h;
  h.sim_lengthscale = 0.05;
  h.sim_k = 3;
  PerformanceGp gp(ms, 1, h);
  for (int rep = 0; rep < 4; ++rep)
    for (std::uint32_t j = 0; j < 30; ++j) gp.observe({j, 0, j < 15 ? -0.2 : 0.0});
  gp.rebuild_similarity();
  ck_assert(gp.graph().similarity_edges() >= 30);
  Eigen::MatrixXd km = dense_kernel(*gp.kernel());
  ck_assert(Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd>(km).eigenvalues().minCoeff() >= -1e-9);
  // slow machines now correlate more with each other than with fast ones
  ck_assert(km(0, 1) > km(0, 20));
}
END_TEST

START_TEST(state_round_trip_and_errors) {
  const std::string path = temp_path("state");
  GpHyper h = four_hyper();
  PerformanceGp::Options opt;
  opt.window = 4;
  PerformanceGp gp(four_machines(), 2, h, opt);
  std::vector<GpObservation> obs = {{0, 0, 0.10}, {1, 0, 0.07}, {0, 1, -0.02}, {2, 0, 0.03}, {3, 5, 0.12}};
  gp.observe(obs);
  save_gp_state(gp, path);
  GpStateLoadReport rep;
  PerformanceGp back = load_gp_state(path, four_machines(), &rep);
  ck_assert_uint_eq(rep.machines_missing, 0);
  ck_assert_uint_eq(back.window().size(), 4);
  for (std::uint32_t j = 0; j < 4; ++j)
    for (std::uint32_t t = 0; t < 3; ++t)
      ck_assert(std::abs(back.mean(j, t) - gp.mean(j, t)) < 1e-12 && std::abs(back.var(j, t) - gp.var(j, t)) < 1e-12);
  ck_assert(back.long_term_count().sum() == 5);

  // a cluster where m1 is gone and a new machine appeared
  auto changed = four_machines();
  changed[1].name = "new";
  PerformanceGp partial = load_gp_state(path, changed, &rep);
  ck_assert_uint_eq(rep.machines_missing, 1);
  ck_assert_uint_eq(rep.observations_dropped, 1);
  ck_assert_uint_eq(partial.window().size(), 3);

  // corruption: flip a payload byte, truncate, wrong version, wrong magic
  std::ifstream in(path, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto expect_error = [&](std::string content, const char* needle) {
    std::ofstream(path, std::ios::binary | std::ios::trunc) << content;
    try {
      load_gp_state(path, four_machines());
      ck_abort_msg("no error for a bad file (expected \"%s\")", needle);
    } catch (const FormatError& e) {
      ck_assert_msg(std::string(e.what()).find(needle) != std::string::npos, "message \"%s\" lacks \"%s\"", e.what(),
                    needle);
      ck_assert_msg(std::string(e.what()).find(path) != std::string::npos, "message does not name the file");
    }
  };
  std::string flipped = bytes;
  flipped[40] ^= 0x5a;
  expect_error(flipped, "checksum");
  expect_error(bytes.substr(0, bytes.size() - 9), "truncated");
  expect_error(bytes.substr(0, 20), "truncated");
  std::string v2 = bytes;
  v2[8] = 2;
  expect_error(v2, "version 2");
  std::string magic = bytes;
  magic[0] = 'X';
  expect_error(magic, "bad magic");
  std::remove(path.c_str());
}
END_TEST

int main() {
  Suite* s = suite_create("rwgp");
  TCase* tc = tcase_create("core");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, kernel_matches_hand_computation);
  tcase_add_test(tc, kernel_is_psd);
  tcase_add_test(tc, posterior_matches_closed_form);
  tcase_add_test(tc, window_drops_oldest_exactly);
  tcase_add_test(tc, set_values_matches_closed_form_and_contracts);
  tcase_add_test(tc, incremental_updates_do_not_drift);
  tcase_add_test(tc, variance_shrinks_where_observations_are_dense);
  tcase_add_test(tc, likelihood_matches_closed_form);
  tcase_add_test(tc, rbf_and_none_variants);
  tcase_add_test(tc, fit_improves_likelihood);
  tcase_add_test(tc, similarity_edges_from_observations);
  tcase_add_test(tc, state_round_trip_and_errors);
  suite_add_tcase(s, tc);
  SRunner* sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed == 0 ? 0 : 1;
}
