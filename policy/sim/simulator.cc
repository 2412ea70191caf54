// The Simulator facade over its parts (sim_internal.h).
#include "policy/sim/simulator.h"

#include <chrono>
#include <stdexcept>

#include "policy/sim/sim_internal.h"

namespace duet {

struct Simulator::Impl {
  Impl(const Trace& t, const ClusterModel& c, const ThroughputTable& tb, const PriceTable* p, const SimOptions& o)
      : state(t, c, tb, p, o), scheduler(state), loop(state, scheduler) {}
  sim::SimState state;
  sim::Scheduler scheduler;
  sim::EventLoop loop;
};

Simulator::Simulator(const Trace& trace, const ClusterModel& cluster, const ThroughputTable& table,
                     const PriceTable* prices, const SimOptions& options)
    : p_(std::make_unique<Impl>(trace, cluster, table, prices, options)) {
  if (!(options.period_s > 0)) throw std::invalid_argument("period must be > 0 seconds");
  p_->state.load();
}
Simulator::~Simulator() = default;

void Simulator::set_policies(OrderingPolicy* ordering, PlacementPolicy* placement) {
  if (!ordering || !placement) throw std::invalid_argument("set_policies: both policies are needed");
  sim::Policies& pol = p_->state.pol;
  pol.ordering = ordering;
  pol.placement = placement;
  pol.joint = nullptr;
  ordering->pair_with(*placement);
}
void Simulator::set_joint(JointPolicy* joint) {
  if (!joint) throw std::invalid_argument("set_joint: no policy");
  sim::Policies& pol = p_->state.pol;
  pol.joint = joint;
  pol.ordering = nullptr;
  pol.placement = nullptr;
}
void Simulator::set_observer(SimObserver* o) { p_->state.pol.observer = o; }

bool Simulator::step() {
  const sim::Policies& pol = p_->state.pol;
  if (!pol.joint && !(pol.ordering && pol.placement)) throw std::logic_error("Simulator::step: no policies set");
  return p_->loop.step();
}

SimResult Simulator::run() {
  auto t0 = std::chrono::steady_clock::now();
  while (step()) {}
  SimResult r = result();
  r.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

SimResult Simulator::result() const { return sim::summarize(p_->state); }
double Simulator::now() const { return p_->state.now; }
int64_t Simulator::dropped_jobs() const { return p_->state.dropped; }

}  // namespace duet
