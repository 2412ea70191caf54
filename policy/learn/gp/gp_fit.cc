#include "policy/learn/gp/gp_fit.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <numeric>
#include <vector>

#include "policy/learn/gp/gp_likelihood.h"
#include "policy/learn/gp/machine_kernel.h"
#include "policy/learn/gp/performance_gp.h"

namespace duet::learn {

namespace {

double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }
double logit(double p) {
  p = std::clamp(p, 1e-6, 1 - 1e-6);
  return std::log(p / (1 - p));
}
double safe_log(double v) { return std::log(std::max(v, 1e-12)); }

// theta <-> hyper. Layout: [log sf2, log sn2, logit rho, mu0, kind-specific...]
struct Codec {
  GpHyper base;
  bool graph = false;
  bool sim = false;

  std::vector<double> encode(const GpHyper& h) const {
    std::vector<double> t = {safe_log(h.signal_var), safe_log(h.noise_var), logit(h.type_corr), h.prior_mean};
    if (h.kind == KernelKind::random_walk) {
      t.push_back(logit(h.beta / 0.5));
      const double w0 = std::max(h.walk_weights[0], 1e-6);
      for (std::size_t p = 1; p < h.walk_weights.size(); ++p)
        t.push_back(std::log(std::max(h.walk_weights[p], 1e-6) / w0));
      if (graph) {
        t.push_back(safe_log(h.graph.same_type));
        t.push_back(safe_log(h.graph.same_rack));
        if (sim) t.push_back(safe_log(h.graph.similarity));
      }
    } else if (h.kind == KernelKind::rbf) {
      t.push_back(safe_log(h.lengthscale));
    }
    return t;
  }

  GpHyper decode(const std::vector<double>& t) const {
    GpHyper h = base;
    auto clampexp = [](double v) { return std::exp(std::clamp(v, -25.0, 10.0)); };
    h.signal_var = clampexp(t[0]);
    h.noise_var = std::max(clampexp(t[1]), 1e-8);
    h.type_corr = sigmoid(t[2]);
    h.prior_mean = t[3];
    std::size_t i = 4;
    if (h.kind == KernelKind::random_walk) {
      h.beta = std::max(0.5 * sigmoid(t[i++]), 1e-4);
      h.walk_weights[0] = 1.0;
      for (std::size_t p = 1; p < h.walk_weights.size(); ++p) h.walk_weights[p] = clampexp(t[i++]);
      const double s = std::accumulate(h.walk_weights.begin(), h.walk_weights.end(), 0.0);
      for (double& w : h.walk_weights) w /= s;
      if (graph) {
        h.graph.same_type = clampexp(t[i++]);
        h.graph.same_rack = clampexp(t[i++]);
        if (sim) h.graph.similarity = clampexp(t[i++]);
      }
    } else if (h.kind == KernelKind::rbf) {
      h.lengthscale = clampexp(t[i++]);
    }
    return h;
  }
};

// Plain Nelder-Mead (reflection 1, expansion 2, contraction 0.5, shrink 0.5), maximising f.
std::vector<double> nelder_mead(const std::function<double(const std::vector<double>&)>& f, std::vector<double> x0,
                                std::size_t max_evals, double tol, double& best, std::size_t& evals) {
  const std::size_t d = x0.size();
  std::vector<std::vector<double>> pts(d + 1, x0);
  std::vector<double> val(d + 1);
  for (std::size_t i = 0; i < d; ++i) pts[i + 1][i] += 0.5;
  evals = 0;
  auto eval = [&](const std::vector<double>& x) {
    ++evals;
    double v = f(x);
    return std::isfinite(v) ? -v : std::numeric_limits<double>::infinity();  // minimise -f
  };
  for (std::size_t i = 0; i <= d; ++i) val[i] = eval(pts[i]);
  std::vector<std::size_t> order(d + 1);
  while (evals < max_evals) {
    std::iota(order.begin(), order.end(), 0);
    std::sort(order.begin(), order.end(), [&](auto a, auto b) { return val[a] < val[b]; });
    const std::size_t lo = order[0], hi = order[d], nh = order[d - 1];
    if (std::isfinite(val[hi]) && std::abs(val[hi] - val[lo]) < tol) break;
    std::vector<double> c(d, 0.0);
    for (std::size_t i = 0; i <= d; ++i)
      if (i != hi)
        for (std::size_t k = 0; k < d; ++k) c[k] += pts[i][k] / static_cast<double>(d);
    auto along = [&](double t) {
      std::vector<double> x(d);
      for (std::size_t k = 0; k < d; ++k) x[k] = c[k] + t * (pts[hi][k] - c[k]);
      return x;
    };
    auto xr = along(-1.0);
    double fr = eval(xr);
    if (fr < val[lo]) {
      auto xe = along(-2.0);
      double fe = eval(xe);
      if (fe < fr) {
        pts[hi] = xe;
        val[hi] = fe;
      } else {
        pts[hi] = xr;
        val[hi] = fr;
      }
    } else if (fr < val[nh]) {
      pts[hi] = xr;
      val[hi] = fr;
    } else {
      auto xc = along(fr < val[hi] ? -0.5 : 0.5);
      double fc = eval(xc);
      if (fc < std::min(fr, val[hi])) {
        pts[hi] = xc;
        val[hi] = fc;
      } else {
        for (std::size_t i = 0; i <= d; ++i) {
          if (i == lo) continue;
          for (std::size_t k = 0; k < d; ++k) pts[i][k] = pts[lo][k] + 0.5 * (pts[i][k] - pts[lo][k]);
          val[i] = eval(pts[i]);
        }
      }
    }
  }
  std::size_t b = static_cast<std::size_t>(std::min_element(val.begin(), val.end()) - val.begin());
  best = -val[b];
  return pts[b];
}

}  // namespace

FitResult fit_hyper(const PerformanceGp& gp, std::span<const GpObservation> obs_in, const FitOptions& opt) {
  FitResult res;
  res.hyper = gp.hyper();
  if (gp.hyper().kind == KernelKind::none || obs_in.empty()) return res;
  const std::size_t take = std::min(opt.max_obs, obs_in.size());
  std::vector<GpObservation> obs(obs_in.end() - static_cast<std::ptrdiff_t>(take), obs_in.end());
  for (auto& o : obs) {
    if (o.machine >= gp.num_machines()) throw std::out_of_range("fit_hyper: observation machine index out of range");
    o.job_type = gp.type_slot(o.job_type);
  }

  Codec codec;
  codec.base = gp.hyper();
  codec.graph = opt.fit_graph_weights;
  codec.sim = gp.graph().similarity_edges() > 0;
  MachineGraph g = gp.graph();  // candidate weights are tried on a copy
  auto lml = [&](const std::vector<double>& t) {
    GpHyper h = codec.decode(t);
    g.set_weights(h.graph);
    auto k = make_machine_kernel(h, g, gp.machines());
    return log_marginal_likelihood(*k, h, obs);
  };
  const auto x0 = codec.encode(gp.hyper());
  res.lml_start = lml(x0);
  double best = 0;
  auto x = nelder_mead(lml, x0, opt.max_evals, opt.tolerance, best, res.evals);
  if (best > res.lml_start) {
    res.hyper = codec.decode(x);
    res.lml_best = best;
  } else {
    res.lml_best = res.lml_start;
  }
  return res;
}

}  // namespace duet::learn
