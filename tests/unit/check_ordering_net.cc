// Unit tests of the learned scheduler's networks: the squeeze-and-communicate
// ordering network (permutation equivariance, 1 and 10,000 jobs, the
// communicate path), the placement head (LibTorch module == plain C++) and
// the centralised critic.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <stdexcept>
#include <vector>

#include "policy/learn/agents/ordering_agent.h"
#include "policy/learn/agents/placement_head.h"
#include "policy/learn/nets/model_init.h"
#include "policy/learn/nets/nets_torch.h"

#include <check.h>  // last: it defines a fail() macro

using namespace duet::learn;

namespace {

Model test_model() {
  Model m = make_initial_model(NetConfig{}, GpHyper{}, 42);
  // a non-trivial normalisation, so the agent must apply it consistently
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> u(0.5f, 2.0f);
  for (std::size_t f = 0; f < m.job_norm.size(); ++f) m.job_norm.mean[f] = u(rng) - 1.0f, m.job_norm.scale[f] = u(rng);
  for (std::size_t f = 0; f < m.machine_norm.size(); ++f)
    m.machine_norm.mean[f] = u(rng) - 1.0f, m.machine_norm.scale[f] = u(rng);
  return m;
}

std::vector<float> random_rows(std::size_t n, std::size_t d, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> g(0.0f, 1.5f);
  std::vector<float> v(n * d);
  for (float& x : v) x = g(rng);
  return v;
}

std::vector<float> permute_rows(const std::vector<float>& rows, std::size_t d, const std::vector<std::size_t>& perm) {
  std::vector<float> out(rows.size());
  for (std::size_t i = 0; i < perm.size(); ++i)
    std::copy_n(rows.begin() + static_cast<long>(perm[i] * d), d, out.begin() + static_cast<long>(i * d));
  return out;
}

void check_equivariance(std::size_t n, std::uint32_t seed) {
  Model m = test_model();
  OrderingAgent agent(m);
  const std::size_t d = m.nets.ordering.job_features, k = m.nets.ordering.order_message;
  auto jobs = random_rows(n, d, seed);
  auto cluster = random_rows(1, m.nets.ordering.cluster_features, seed + 1);
  auto pmsg = random_rows(1, m.nets.placement.placement_message, seed + 2);
  std::vector<float> s, msg, s2, msg2;
  agent.score_with_messages(jobs, n, cluster, pmsg, s, msg);
  ck_assert_uint_eq(s.size(), n);
  ck_assert_uint_eq(msg.size(), n * k);
  std::vector<std::size_t> perm(n);
  std::iota(perm.begin(), perm.end(), 0);
  std::shuffle(perm.begin(), perm.end(), std::mt19937(seed + 3));
  agent.score_with_messages(permute_rows(jobs, d, perm), n, cluster, pmsg, s2, msg2);
  double worst = 0;
  for (std::size_t i = 0; i < n; ++i) {
    ck_assert(std::isfinite(s[i]));
    worst = std::max(worst, static_cast<double>(std::abs(s2[i] - s[perm[i]])));
    for (std::size_t c = 0; c < k; ++c)
      worst = std::max(worst, static_cast<double>(std::abs(msg2[i * k + c] - msg[perm[i] * k + c])));
  }
  // pooling sums in another order: equal up to float rounding
  ck_assert_msg(worst < 1e-4, "shuffled queue: scores differ by %g from the permuted scores (n=%zu)", worst, n);
}

// The agent's kernels (AVX2 where the CPU has it, and the portable one)
// compute what the LibTorch module computes, for queue lengths that are not
// multiples of the kernels' blocks and layer widths that are not multiples
// of their lanes.
void check_agent_equals_module(const NetConfig& cfg, std::size_t n, std::uint32_t seed) {
  Model m = make_initial_model(cfg, GpHyper{}, seed);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(0.5f, 2.0f);
  for (std::size_t f = 0; f < m.job_norm.size(); ++f) m.job_norm.mean[f] = u(rng) - 1.0f, m.job_norm.scale[f] = u(rng);
  for (std::size_t f = 0; f < m.cluster_norm.size(); ++f)
    m.cluster_norm.mean[f] = u(rng), m.cluster_norm.scale[f] = u(rng);
  for (NamedArray& w : m.weights) {  // trained models listen to the placement message
    if (w.name == "ordering.head1.weight")
      for (float& x : w.data)
        if (x == 0.0f) x = 0.05f;
    if (w.name == "ordering.gate.weight")  // and a trained gate reads its context
      for (float& x : w.data) x = u(rng) - 1.25f;
  }
  const std::size_t d = cfg.ordering.job_features;
  auto jobs = random_rows(n, d, seed + 1);
  auto cluster = random_rows(1, cfg.ordering.cluster_features, seed + 2);
  auto pmsg = random_rows(1, cfg.placement.placement_message, seed + 3);
  OrderingNet net(cfg);
  import_weights(*net, "ordering.", m.weights);
  torch::NoGradGuard ng;
  auto x = torch::from_blob(jobs.data(), {static_cast<long>(n), static_cast<long>(d)}).clone();
  x = (x - torch::from_blob(m.job_norm.mean.data(), {static_cast<long>(d)})) *
      torch::from_blob(m.job_norm.scale.data(), {static_cast<long>(d)});
  auto cl = torch::from_blob(cluster.data(), {static_cast<long>(cluster.size())}).clone();
  cl = (cl - torch::from_blob(m.cluster_norm.mean.data(), {cl.size(0)})) *
       torch::from_blob(m.cluster_norm.scale.data(), {cl.size(0)});
  auto e = net->embed(x);
  auto ctx = OrderingNetImpl::squeeze(e);
  auto ts =
      net->scores(e, ctx, cl, torch::from_blob(pmsg.data(), {static_cast<long>(pmsg.size())}).clone()).contiguous();
  auto tm = net->messages(e, ctx).contiguous();
  const float tgate = cfg.ordering.preemptive ? net->gate_value(ctx, cl).item<float>() : 0.0f;
  for (auto k : {OrderingAgent::Kernel::kBest, OrderingAgent::Kernel::kPortable}) {
    OrderingAgent agent(m, k);
    std::vector<float> s, msg, s_only;
    float gate = -1, gate_only = -1;
    agent.score_with_messages(jobs, n, cluster, pmsg, s, msg, &gate);
    agent.score(jobs, n, cluster, pmsg, s_only, &gate_only);
    ck_assert_float_eq_tol(gate, tgate, 1e-5);
    ck_assert_float_eq_tol(gate_only, tgate, 1e-5);
    ck_assert_uint_eq(msg.size(), n * cfg.ordering.order_message);
    double worst = 0;
    for (std::size_t i = 0; i < n; ++i) {
      const double ref = ts.data_ptr<float>()[i];
      worst = std::max(
          {worst, std::abs(s[i] - ref) / (1 + std::abs(ref)), std::abs(s_only[i] - ref) / (1 + std::abs(ref))});
    }
    for (std::size_t i = 0; i < msg.size(); ++i)
      worst = std::max(worst, double(std::abs(msg[i] - tm.data_ptr<float>()[i])));
    ck_assert_msg(worst < 1e-5, "%s kernel, %zu jobs: differs from the LibTorch module by %g",
                  k == OrderingAgent::Kernel::kBest ? "best" : "portable", n, worst);
  }
}

}  // namespace

START_TEST(agent_equals_torch_module) {
  NetConfig odd;  // widths that are not multiples of the kernels' 16 lanes
  odd.ordering.job_features = 11, odd.ordering.cluster_features = 5, odd.ordering.hidden = 20;
  odd.ordering.embed = 13, odd.ordering.head_hidden = 7, odd.ordering.order_message = 3;
  odd.placement.placement_message = 6;
  for (std::size_t n : {1, 3, 4, 65, 301}) {
    check_agent_equals_module(NetConfig{}, n, 10 + static_cast<std::uint32_t>(n));
    check_agent_equals_module(odd, n, 20 + static_cast<std::uint32_t>(n));
    NetConfig pre = odd;  // the gate of a preemptive ordering, on [context ; cluster]
    pre.ordering.preemptive = 1;
    check_agent_equals_module(pre, n, 30 + static_cast<std::uint32_t>(n));
  }
}
END_TEST

START_TEST(equivariant_small_queue) { check_equivariance(57, 1); }
END_TEST

START_TEST(equivariant_10000_jobs) { check_equivariance(10000, 2); }
END_TEST

START_TEST(one_job_and_empty_queue) {
  Model m = test_model();
  OrderingAgent agent(m);
  auto jobs = random_rows(1, m.nets.ordering.job_features, 4);
  std::vector<float> cluster(m.nets.ordering.cluster_features, 0.5f), s, p;
  agent.score(jobs, 1, cluster, {}, s);
  ck_assert_uint_eq(s.size(), 1);
  ck_assert(std::isfinite(s[0]));
  OrderingAgent::softmax(s, p);
  ck_assert(std::abs(p[0] - 1.0f) < 1e-6);
  agent.score({}, 0, cluster, {}, s);
  ck_assert_uint_eq(s.size(), 0);
}
END_TEST

START_TEST(communicate_path_matters) {
  Model m = test_model();
  {
    // An untrained model does not listen to the placement message (its
    // weights start at zero, duet-model(5) MESSAGES)...
    OrderingAgent fresh(m);
    std::vector<float> jobs = random_rows(20, m.nets.ordering.job_features, 5),
                       cl(m.nets.ordering.cluster_features, 0.f);
    std::vector<float> pmsg(m.nets.placement.placement_message, 1.0f), s0, s1;
    fresh.score(jobs, 20, cl, {}, s0);
    fresh.score(jobs, 20, cl, pmsg, s1);
    ck_assert(s0 == s1);
  }
  // ... a trained one does: give those weights values.
  for (NamedArray& w : m.weights)
    if (w.name == "ordering.head1.weight") {
      const std::int64_t in = w.shape[1], msg0 = in - m.nets.placement.placement_message;
      for (std::int64_t r = 0; r < w.shape[0]; ++r)
        for (std::int64_t k = msg0; k < in; ++k) w.data[r * in + k] = 0.1f * static_cast<float>((r + k) % 5) - 0.2f;
    }
  OrderingAgent agent(m);
  const std::size_t d = m.nets.ordering.job_features;
  auto jobs = random_rows(20, d, 5);
  std::vector<float> cluster(m.nets.ordering.cluster_features, 0.0f), a, b, c, e;
  agent.score(jobs, 20, cluster, {}, a);
  // the queue context: 5 more jobs change the first 20 jobs' scores
  auto more = jobs;
  auto extra = random_rows(5, d, 6);
  for (float& x : extra) x *= 4;
  more.insert(more.end(), extra.begin(), extra.end());
  agent.score(more, 25, cluster, {}, b);
  // the cluster summary and the placement message too
  std::vector<float> cluster2(cluster.size(), 3.0f), pmsg(m.nets.placement.placement_message, 1.0f);
  agent.score(jobs, 20, cluster2, {}, c);
  agent.score(jobs, 20, cluster, pmsg, e);
  double db = 0, dc = 0, de = 0;
  for (int i = 0; i < 20; ++i) {
    db = std::max(db, double(std::abs(a[i] - b[i])));
    dc = std::max(dc, double(std::abs(a[i] - c[i])));
    de = std::max(de, double(std::abs(a[i] - e[i])));
  }
  ck_assert_msg(db > 1e-4 && dc > 1e-4 && de > 1e-5, "context/cluster/message had no effect: %g %g %g", db, dc, de);
  std::vector<float> p;
  OrderingAgent::softmax(a, p);
  ck_assert(std::abs(std::accumulate(p.begin(), p.end(), 0.0) - 1.0) < 1e-5);
}
END_TEST

START_TEST(bad_input_sizes_are_rejected) {
  Model m = test_model();
  OrderingAgent agent(m);
  std::vector<float> jobs(3 * m.nets.ordering.job_features - 1), cluster(m.nets.ordering.cluster_features), s;
  try {
    agent.score(jobs, 3, cluster, {}, s);
    ck_abort_msg("short job rows accepted");
  } catch (const std::invalid_argument& e) {
    ck_assert_msg(std::string(e.what()).find("job feature rows") != std::string::npos, "%s", e.what());
  }
  jobs.resize(3 * m.nets.ordering.job_features);
  std::vector<float> bad_msg(m.nets.placement.placement_message + 1);
  ck_assert_int_eq(
      [&] {
        try {
          agent.score(jobs, 3, cluster, bad_msg, s);
        } catch (const std::invalid_argument&) { return 1; }
        return 0;
      }(),
      1);
}
END_TEST

START_TEST(training_gradients_reach_every_parameter) {
  NetConfig cfg;
  torch::manual_seed(1);
  OrderingNet net(cfg);
  auto jobs = torch::randn({12, cfg.ordering.job_features});
  auto cl = torch::randn({cfg.ordering.cluster_features});
  auto pm = torch::randn({cfg.placement.placement_message});
  auto e = net->embed(jobs);
  auto ctx = OrderingNetImpl::squeeze(e);
  auto logp = torch::log_softmax(net->scores(e, ctx, cl, pm), 0);
  auto loss = -logp[3] + net->messages(e, ctx).pow(2).sum();
  loss.backward();
  for (const auto& p : net->named_parameters()) {
    ck_assert_msg(p.value().grad().defined() && p.value().grad().abs().sum().item<float>() > 0, "no gradient for %s",
                  p.key().c_str());
  }
}
END_TEST

START_TEST(placement_head_plain_cpp_equals_torch) {
  Model m = test_model();
  PlacementHead head(m);
  PlacementNet net(m.nets);
  import_weights(*net, "placement.", m.weights);
  const std::size_t k = 300, f = m.nets.placement.machine_features;
  auto rows = random_rows(k, f, 7);
  auto omsg = random_rows(1, m.nets.ordering.order_message, 8);
  std::vector<float> plain, pmsg;
  head.score(rows, k, omsg, plain);
  head.message(rows, k, pmsg);
  torch::NoGradGuard ng;
  auto x = torch::from_blob(rows.data(), {static_cast<long>(k), static_cast<long>(f)}).clone();
  auto mean = torch::from_blob(m.machine_norm.mean.data(), {static_cast<long>(f)}).clone();
  auto scale = torch::from_blob(m.machine_norm.scale.data(), {static_cast<long>(f)}).clone();
  x = (x - mean) * scale;
  auto ts = net->forward(x, torch::from_blob(omsg.data(), {static_cast<long>(omsg.size())}).clone());
  auto tm = net->message(x);
  for (std::size_t i = 0; i < k; ++i)
    ck_assert_msg(std::abs(ts[static_cast<long>(i)].item<float>() - plain[i]) < 1e-4, "machine %zu: torch %g plain %g",
                  i, ts[static_cast<long>(i)].item<float>(), plain[i]);
  for (std::size_t c = 0; c < pmsg.size(); ++c)
    ck_assert(std::abs(tm[static_cast<long>(c)].item<float>() - pmsg[c]) < 1e-4);
  std::vector<std::uint32_t> order, top;
  PlacementHead::rank(plain, order);
  PlacementHead::rank(plain, top, 10);
  for (std::size_t i = 1; i < k; ++i) ck_assert(plain[order[i - 1]] >= plain[order[i]]);
  ck_assert(std::equal(top.begin(), top.begin() + 10, order.begin()));
}
END_TEST

START_TEST(critic_sees_both_agents_and_is_permutation_invariant) {
  NetConfig cfg;
  torch::manual_seed(9);
  CriticNet critic(cfg);
  auto jobs = torch::randn({40, cfg.ordering.job_features});
  auto machines = torch::randn({25, cfg.placement.machine_features});
  auto cl = torch::randn({cfg.ordering.cluster_features});
  torch::NoGradGuard ng;
  auto v = critic->forward(jobs, machines, cl);
  ck_assert_int_eq(v.dim(), 0);
  auto v2 =
      critic->forward(jobs.index_select(0, torch::randperm(40)), machines.index_select(0, torch::randperm(25)), cl);
  ck_assert(std::abs(v.item<float>() - v2.item<float>()) < 1e-5);
  auto v3 = critic->forward(jobs, machines * 2, cl);
  ck_assert(std::abs(v.item<float>() - v3.item<float>()) > 1e-6);  // machines are seen
  ck_assert_uint_eq(export_weights(*critic, "critic.").size(), critic_param_shapes(cfg).size());
}
END_TEST

START_TEST(torch_parameters_match_declared_shapes) {
  NetConfig cfg;
  cfg.ordering.job_features = 11;
  cfg.placement.hidden = 20;
  auto check = [](const std::vector<NamedArray>& got, const std::vector<ParamShape>& want) {
    ck_assert_uint_eq(got.size(), want.size());
    for (std::size_t i = 0; i < got.size(); ++i) {
      ck_assert_str_eq(got[i].name.c_str(), want[i].name.c_str());
      ck_assert(got[i].shape == want[i].shape);
    }
  };
  check(export_weights(*OrderingNet(cfg), "ordering."), ordering_param_shapes(cfg));
  cfg.ordering.preemptive = 1;
  check(export_weights(*OrderingNet(cfg), "ordering."), ordering_param_shapes(cfg));
  const auto shapes = ordering_param_shapes(cfg);
  ck_assert_str_eq(shapes.back().name.c_str(), "ordering.gate.bias");
  check(export_weights(*PlacementNet(cfg), "placement."), placement_param_shapes(cfg));
  check(export_weights(*CriticNet(cfg), "critic."), critic_param_shapes(cfg));
}
END_TEST

int main() {
  Suite* s = suite_create("ordering_net");
  TCase* tc = tcase_create("core");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, equivariant_small_queue);
  tcase_add_test(tc, equivariant_10000_jobs);
  tcase_add_test(tc, one_job_and_empty_queue);
  tcase_add_test(tc, agent_equals_torch_module);
  tcase_add_test(tc, communicate_path_matters);
  tcase_add_test(tc, bad_input_sizes_are_rejected);
  tcase_add_test(tc, training_gradients_reach_every_parameter);
  tcase_add_test(tc, placement_head_plain_cpp_equals_torch);
  tcase_add_test(tc, critic_sees_both_agents_and_is_permutation_invariant);
  tcase_add_test(tc, torch_parameters_match_declared_shapes);
  suite_add_tcase(s, tc);
  SRunner* sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed == 0 ? 0 : 1;
}
