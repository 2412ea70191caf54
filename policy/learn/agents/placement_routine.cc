#include "policy/learn/agents/placement_routine.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>

#include "policy/learn/agents/machine_set.h"
#include "policy/learn/agents/placement_head.h"
#include "policy/learn/gp/performance_gp.h"

namespace duet::learn {

std::uint32_t PlacementScorer::choose(const PlacementScores& s, std::span<const std::uint32_t> among) {
  std::uint32_t best = among[0];
  for (std::uint32_t k : among)
    if (s.total[k] > s.total[best]) best = k;
  return best;
}

void HeadScorer::score(std::span<const float> rows, std::size_t k, std::vector<float>& scores) {
  head_.score(rows, k, msg_, scores);
}

void machine_states(std::span<const MachineView> machines, std::span<const std::uint32_t> idx, int rack,
                    std::vector<MachineState>& states) {
  states.resize(idx.size());
  for (std::size_t k = 0; k < idx.size(); ++k) {
    const MachineView& mv = machines[idx[k]];
    states[k] = MachineState{idx[k],
                             static_cast<std::uint16_t>(std::clamp(mv.free_gpus, 0, 65535)),
                             static_cast<std::uint16_t>(std::clamp(mv.total_gpus, 1, 65535)),
                             static_cast<std::uint16_t>(std::clamp(mv.jobs, 0, 65535)),
                             static_cast<float>(mv.speed),
                             rack >= 0 && mv.rack == rack ? 1.f : 0.f};
  }
}

void candidate_rows(const PerformanceGp& gp, std::span<const MachineView> machines, std::span<const std::uint32_t> idx,
                    const PlacementJob& job, int rack, std::vector<MachineState>& states, std::vector<float>& rows) {
  machine_states(machines, idx, rack, states);
  placement_features(gp, job, states, rows);
}

void score_candidates(const PerformanceGp& gp, std::span<const MachineView> machines, const PlacementJob& job, int rack,
                      PlacementScorer& scorer, const PriorWeights& w, PlacementScores& s) {
  candidate_rows(gp, machines, s.machines, job, rack, s.states, s.rows);
  const std::size_t k = s.machines.size();
  scorer.score(s.rows, k, s.learned);
  s.prior.resize(k);
  s.total.resize(k);
  for (std::size_t i = 0; i < k; ++i) {
    s.prior[i] = placement_prior(s.rows.data() + i * kPlacementFeatures, w.weight, w.risk_aversion);
    s.total[i] = s.learned[i] + static_cast<float>(s.prior[i]);
  }
}

namespace {

// SpreadSets::learned's prior for the first machine, in place of the speed
// prior in s.prior and s.total: it peaks at the fastest floor, so an
// untrained model takes the tight rule and training moves a job faster or
// slower from there (with the speed prior, sampling almost never left the
// fastest).
void floor_centred_prior(double floor, const PriorWeights& w, PlacementScores& s) {
  if (!(floor > 0)) return;  // no set needed, or none holds the job: the speed prior stays
  const double log_floor = std::log(floor);
  for (std::size_t k = 0; k < s.machines.size(); ++k) {
    const float* row = s.rows.data() + k * kPlacementFeatures;
    s.prior[k] = w.weight * (-std::abs(row[kPredLogSpeed] - log_floor) - w.risk_aversion * row[kGpSd]);
    s.total[k] = s.learned[k] + static_cast<float>(s.prior[k]);
  }
}

// A job no machine holds alone: `first`, then the other candidates re-scored
// with locality to it (same rack), best first, until the job is held.
Placement machine_set(const PerformanceGp& gp, std::span<const MachineView> machines, int gpus, const PlacementJob& pj,
                      std::uint32_t first, PlacementScorer& scorer, const PriorWeights& w, PlacementScores& s) {
  score_candidates(gp, machines, pj, machines[first].rack, scorer, w, s);
  std::vector<std::size_t> ord(s.machines.size());
  std::iota(ord.begin(), ord.end(), std::size_t{0});
  std::stable_sort(ord.begin(), ord.end(), [&](std::size_t a, std::size_t b) {
    if ((s.machines[a] == first) != (s.machines[b] == first)) return s.machines[a] == first;
    return s.total[a] > s.total[b];
  });
  Placement p;
  int need = gpus;
  for (std::size_t k : ord) {
    const int take = std::min(need, machines[s.machines[k]].free_gpus);
    p.push_back({static_cast<int>(s.machines[k]), take});
    need -= take;
    if (need == 0) break;
  }
  return p;
}

}  // namespace

SpreadPlan plan_spread(const PerformanceGp& gp, std::span<const MachineView> machines, double floor,
                       const PlacementJob& pj, PlacementScorer& scorer, const PriorWeights& w, PlacementScores& s) {
  SpreadPlan p{w, w.spread == SpreadSets::slow ? 0.0 : floor, std::nullopt};
  bool flip = w.spread != SpreadSets::fastest;
  if (w.spread == SpreadSets::learned) {
    score_candidates(gp, machines, pj, -1, scorer, w, s);
    floor_centred_prior(floor, w, s);
    s.among.resize(s.machines.size());
    std::iota(s.among.begin(), s.among.end(), 0u);
    p.first = s.machines[scorer.choose(s, s.among)];
    flip = !(machines[*p.first].speed > floor);
    if (flip) p.keep = machines[*p.first].speed;
  }
  if (flip) {
    p.prior.weight = -w.weight;
    p.prior.risk_aversion = -w.risk_aversion;
  }
  return p;
}

std::optional<Placement> place_job(const PerformanceGp& gp, std::span<const MachineView> machines, const JobView& job,
                                   const PlacementJob& pj, PlacementScorer& scorer, const PriorWeights& w,
                                   PlacementScores& s) {
  if (job.gpus <= 0) return std::nullopt;
  auto allowed = [&](std::size_t i) { return type_allowed(job, machines[i]); };
  if (placement_candidates(machines, allowed, s.machines) < job.gpus) return std::nullopt;
  // The job keeps to the candidates above its speed floor and waits while
  // they have too few GPUs free (keep_to_speed_floor). If none of them holds
  // it now, it waits if one machine could hold it whole (consolidation), else
  // it is larger than every machine it may use and is spread by the spread
  // rule (plan_spread).
  if (keep_to_speed_floor(machines, job.gpus, job.wait_s, w.speed_floor, allowed, s.machines) < job.gpus)
    return std::nullopt;
  const bool spread = std::none_of(s.machines.begin(), s.machines.end(),
                                   [&](std::uint32_t m) { return machines[m].free_gpus >= job.gpus; });
  if (spread && one_machine_could_hold(machines, job.gpus, allowed)) return std::nullopt;
  PriorWeights use = w;
  if (spread) {
    const SpreadPlan plan = plan_spread(gp, machines, fastest_floor(machines, job.gpus, s.machines), pj, scorer, w, s);
    std::erase_if(s.machines, [&](std::uint32_t m) { return machines[m].speed < plan.keep; });
    if (plan.first) return machine_set(gp, machines, job.gpus, pj, *plan.first, scorer, plan.prior, s);
    use = plan.prior;
  }
  score_candidates(gp, machines, pj, -1, scorer, use, s);
  // One machine if any can hold the whole job; else the first of a set.
  s.among.clear();
  for (std::uint32_t k = 0; k < s.machines.size(); ++k)
    if (machines[s.machines[k]].free_gpus >= job.gpus) s.among.push_back(k);
  const bool one = !s.among.empty();
  if (!one) {
    s.among.resize(s.machines.size());
    std::iota(s.among.begin(), s.among.end(), 0u);
  }
  const std::uint32_t first = s.machines[scorer.choose(s, s.among)];
  if (one) return Placement{{static_cast<int>(first), job.gpus}};
  return machine_set(gp, machines, job.gpus, pj, first, scorer, use, s);
}

std::span<const MachineView> job_machines(const JobTypeSpeeds* speeds, const JobView& job, const ClusterView& c,
                                          std::vector<double>& factor, std::vector<MachineView>& scratch) {
  if (!speeds || !speeds->factors(job.job_type, c.gpu_types, factor)) return c.machines;
  scratch.assign(c.machines.begin(), c.machines.end());
  for (MachineView& m : scratch)
    if (m.gpu_type >= 0 && static_cast<std::size_t>(m.gpu_type) < factor.size()) m.speed *= factor[m.gpu_type];
  return scratch;
}

double placement_speed(std::span<const MachineView> machines, const Placement& p) {
  double speed = 1e300;
  for (const PlacementPart& part : p) speed = std::min(speed, machines[part.machine].speed);
  return speed;
}

std::vector<MachineDesc> machine_descs(const ClusterView& c) {
  std::vector<MachineDesc> d;
  d.reserve(c.machines.size());
  for (const MachineView& m : c.machines) {
    const std::string type = m.gpu_type >= 0 && static_cast<std::size_t>(m.gpu_type) < c.gpu_types.size()
                                 ? c.gpu_types[m.gpu_type]
                                 : std::string("?");
    d.push_back(
        MachineDesc{std::string(m.name), type, "r" + std::to_string(m.rack), {std::log(std::max(1e-3, m.speed))}});
  }
  return d;
}

}  // namespace duet::learn
