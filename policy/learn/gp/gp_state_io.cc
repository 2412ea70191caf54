#include "policy/learn/gp/gp_state_io.h"

#include <cmath>
#include <unordered_map>

#include "policy/learn/gp/binary_io.h"

namespace duet::learn {

void save_gp_state(const PerformanceGp& gp, const std::string& path) {
  ByteWriter w;
  write_hyper(w, gp.hyper());
  w.u32(gp.num_job_types());
  w.u64(gp.options().window);
  w.u64(gp.options().refresh_every);
  w.u8(gp.graph().similarity_edges() > 0 ? 1 : 0);
  w.u64(gp.num_machines());
  for (const auto& m : gp.machines()) w.str(m.name);
  w.u64(gp.window().size());
  for (const auto& o : gp.window()) {
    w.u32(o.machine);
    w.u32(o.job_type);
    w.f64(o.value);
  }
  // long-term statistics, row per machine
  const auto& s = gp.long_term_sum();
  const auto& c = gp.long_term_count();
  for (Eigen::Index i = 0; i < s.rows(); ++i)
    for (Eigen::Index t = 0; t < s.cols(); ++t) {
      w.f64(s(i, t));
      w.f64(c(i, t));
    }
  write_container(path, std::string_view(kGpStateMagic, 8), kGpStateVersion, w.bytes());
}

PerformanceGp load_gp_state(const std::string& path, std::vector<MachineDesc> machines, GpStateLoadReport* report) {
  const auto payload = read_container(path, std::string_view(kGpStateMagic, 8), kGpStateVersion, "duet GP state file");
  ByteReader r(payload, path);
  GpHyper h = read_hyper(r);
  const std::uint32_t types = r.u32("num_job_types");
  if (types > 1u << 20) r.error("num_job_types " + std::to_string(types) + " is implausible (corrupt?)");
  PerformanceGp::Options opt;
  opt.window = r.u64("window");
  opt.refresh_every = r.u64("refresh_every");
  if (opt.window == 0 || opt.window > 1u << 16) r.error("window " + std::to_string(opt.window) + ", expected 1..65536");
  const bool had_similarity = r.u8("similarity flag") != 0;
  const auto saved = r.count("machine count", 4);
  std::unordered_map<std::string, std::uint32_t> now;
  for (std::size_t i = 0; i < machines.size(); ++i) now.emplace(machines[i].name, static_cast<std::uint32_t>(i));
  std::vector<std::int64_t> map(saved, -1);
  GpStateLoadReport rep;
  rep.saved_machines = saved;
  for (std::uint64_t i = 0; i < saved; ++i) {
    auto it = now.find(r.str("machine name", 4096));
    if (it == now.end())
      ++rep.machines_missing;
    else
      map[i] = it->second;
  }
  const auto nobs = r.count("window size", 16);
  std::deque<GpObservation> window;
  for (std::uint64_t a = 0; a < nobs; ++a) {
    GpObservation o;
    const auto m = r.u32("observation machine");
    o.job_type = r.u32("observation job type");
    o.value = r.f64("observation value");
    if (m >= saved)
      r.error("observation machine " + std::to_string(m) + " >= saved machine count " + std::to_string(saved));
    if (o.job_type > types)
      r.error("observation job type slot " + std::to_string(o.job_type) + " > " + std::to_string(types));
    if (!std::isfinite(o.value)) r.error("observation value is not finite");
    if (map[m] < 0) {
      ++rep.observations_dropped;
      continue;
    }
    o.machine = static_cast<std::uint32_t>(map[m]);
    window.push_back(o);
  }
  const auto m_now = static_cast<Eigen::Index>(machines.size());
  Eigen::MatrixXd s = Eigen::MatrixXd::Zero(m_now, types + 1), c = Eigen::MatrixXd::Zero(m_now, types + 1);
  for (std::uint64_t i = 0; i < saved; ++i)
    for (std::uint32_t t = 0; t <= types; ++t) {
      double sv = r.f64("long-term sum"), cv = r.f64("long-term count");
      if (map[i] >= 0) {
        s(map[i], t) = sv;
        c(map[i], t) = cv;
      }
    }
  if (!r.at_end()) r.error("trailing bytes after the long-term statistics");
  PerformanceGp gp(std::move(machines), types, h, opt);
  gp.restore(std::move(window), std::move(s), std::move(c));
  if (had_similarity) gp.rebuild_similarity();
  if (report) *report = rep;
  return gp;
}

}  // namespace duet::learn
