#include "policy/learn/gp/gp_hyper.h"

#include <cmath>
#include <stdexcept>
#include <string>

#include "policy/learn/gp/binary_io.h"

namespace duet::learn {

const char* kernel_kind_name(KernelKind k) {
  switch (k) {
    case KernelKind::random_walk:
      return "random_walk";
    case KernelKind::rbf:
      return "rbf";
    case KernelKind::none:
      return "none";
  }
  return "?";
}

void GpHyper::validate() const {
  auto bad = [](const char* f, double v, const char* want) {
    throw std::invalid_argument(std::string("GP hyper-parameter ") + f + " = " + std::to_string(v) + ": expected " +
                                want);
  };
  if (!(beta > 0 && beta <= 0.5)) bad("beta", beta, "0 < beta <= 0.5");
  if (walk_weights.empty() || walk_weights.size() > 16)
    bad("walk_weights.size", double(walk_weights.size()), "1..16 terms");
  double sum = 0;
  for (double v : walk_weights) {
    if (!(v >= 0) || !std::isfinite(v)) bad("walk_weights[p]", v, ">= 0");
    sum += v;
  }
  if (!(sum > 0)) bad("sum(walk_weights)", sum, "> 0");
  if (!(graph.same_type >= 0)) bad("graph.same_type", graph.same_type, ">= 0");
  if (!(graph.same_rack >= 0)) bad("graph.same_rack", graph.same_rack, ">= 0");
  if (!(graph.similarity >= 0)) bad("graph.similarity", graph.similarity, ">= 0");
  if (!(lengthscale > 0) || !std::isfinite(lengthscale)) bad("lengthscale", lengthscale, "> 0");
  if (!(signal_var > 0) || !std::isfinite(signal_var)) bad("signal_var", signal_var, "> 0");
  if (!(noise_var > 0) || !std::isfinite(noise_var)) bad("noise_var", noise_var, "> 0");
  if (!(type_corr >= 0 && type_corr <= 1)) bad("type_corr", type_corr, "0 <= rho <= 1");
  if (!std::isfinite(prior_mean)) bad("prior_mean", prior_mean, "finite");
  if (!(sim_lengthscale > 0)) bad("sim_lengthscale", sim_lengthscale, "> 0");
  if (sim_k > 1000) bad("sim_k", sim_k, "<= 1000");
}

void write_hyper(ByteWriter& w, const GpHyper& h) {
  w.u8(static_cast<std::uint8_t>(h.kind));
  w.f64(h.beta);
  w.u32(static_cast<std::uint32_t>(h.walk_weights.size()));
  w.f64s(h.walk_weights.data(), h.walk_weights.size());
  w.f64(h.graph.same_type);
  w.f64(h.graph.same_rack);
  w.f64(h.graph.similarity);
  w.f64(h.lengthscale);
  w.f64(h.signal_var);
  w.f64(h.noise_var);
  w.f64(h.type_corr);
  w.f64(h.prior_mean);
  w.u32(h.sim_k);
  w.f64(h.sim_lengthscale);
  w.u32(h.sim_min_obs);
}

GpHyper read_hyper(ByteReader& r) {
  GpHyper h;
  auto kind = r.u8("gp.kind");
  if (kind > 2) r.error("gp.kind: " + std::to_string(kind) + " is not a kernel kind (0 random_walk, 1 rbf, 2 none)");
  h.kind = static_cast<KernelKind>(kind);
  h.beta = r.f64("gp.beta");
  auto np = r.u32("gp.walk_weights count");
  if (np == 0 || np > 16) r.error("gp.walk_weights: count " + std::to_string(np) + ", expected 1..16");
  h.walk_weights.resize(np);
  r.f64s(h.walk_weights.data(), np, "gp.walk_weights");
  h.graph.same_type = r.f64("gp.graph.same_type");
  h.graph.same_rack = r.f64("gp.graph.same_rack");
  h.graph.similarity = r.f64("gp.graph.similarity");
  h.lengthscale = r.f64("gp.lengthscale");
  h.signal_var = r.f64("gp.signal_var");
  h.noise_var = r.f64("gp.noise_var");
  h.type_corr = r.f64("gp.type_corr");
  h.prior_mean = r.f64("gp.prior_mean");
  h.sim_k = r.u32("gp.sim_k");
  h.sim_lengthscale = r.f64("gp.sim_lengthscale");
  h.sim_min_obs = r.u32("gp.sim_min_obs");
  try {
    h.validate();
  } catch (const std::invalid_argument& e) { r.error(e.what()); }
  return h;
}

}  // namespace duet::learn
