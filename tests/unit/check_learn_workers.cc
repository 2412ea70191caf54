// Training workers (policy/learn/train/workers.h, grad_sync.h): two workers,
// one per thread, meet over c10d on loopback; the gradient averaging keeps
// their parameters identical. Whole trainings run as duet runs them, one
// process per worker, in tests/integration/train_workers.sh: two trainings
// on threads of one process are not reproducible here, because Debian's
// serial OpenBLAS (libopenblas0-serial 0.3.21) gives wrong sgemm results
// when two threads call it at once (two threads multiplying 96x96 matrices
// got 3,340 of 40,000 products wrong; with Debian's reference BLAS, none).
#include <torch/torch.h>

#include <functional>
#include <stdexcept>
#include <string>
#include <thread>

#include "policy/learn/train/grad_sync.h"
#include "policy/learn/train/workers.h"

// Last: check.h defines a fail() macro that breaks <ios>.
#include <check.h>
#include "tests/unit/run_suite.h"

using namespace duet;
using namespace duet::learn;
using namespace test_support;

// ck_assert belongs to the test's main thread: the workers' threads throw.
static void expect(bool ok, const std::string& what) {
  if (!ok) throw std::runtime_error(what);
}

// Runs f(group) for worker 0 and worker 1 of a two-worker group, each on its
// own thread; rethrows the first failure.
static void two_workers(const std::function<void(WorkerGroup&)>& f) {
  WorkerPlace p0;
  p0.size = 2;
  p0.timeout_s = 60;
  WorkerGroup g0(p0);  // the store, on a free port
  WorkerPlace p1 = p0;
  p1.rank = 1;
  p1.store_port = g0.store_port();
  std::string err1;
  std::thread t([&] {
    try {
      WorkerGroup g1(p1);
      g1.connect();
      f(g1);
    } catch (const std::exception& e) {
      err1 = e.what();
    }
  });
  std::string err0;
  try {
    g0.connect();
    f(g0);
  } catch (const std::exception& e) {
    err0 = e.what();
  }
  t.join();
  if (!err0.empty()) throw std::runtime_error("worker 0: " + err0);
  if (!err1.empty()) throw std::runtime_error("worker 1: " + err1);
}

START_TEST(gradients_are_averaged_over_workers_with_a_loss) {
  float seen[2][4] = {};
  bool stepped[2] = {};
  bool undefined_after[2] = {};
  two_workers([&](WorkerGroup& g) {
    const int r = g.rank();
    auto a = torch::zeros({2}, torch::requires_grad());
    auto b = torch::zeros({2}, torch::requires_grad());
    auto c = torch::zeros({1}, torch::requires_grad());  // no worker has a gradient for it
    // worker 0: loss 1*a0 + 2*a1 + 3*b0 + 4*b1; worker 1: 10*a0 + 20*a1, no b
    if (r == 0)
      (a * torch::tensor({1.f, 2.f})).sum().add((b * torch::tensor({3.f, 4.f})).sum()).backward();
    else
      (a * torch::tensor({10.f, 20.f})).sum().backward();
    stepped[r] = average_grads(&g, {a, b, c}, true);
    for (int i = 0; i < 2; ++i) seen[r][i] = a.grad()[i].item<float>();
    for (int i = 0; i < 2; ++i) seen[r][2 + i] = b.grad()[i].item<float>();
    undefined_after[r] = !c.grad().defined();
    // a step where only worker 1 has a loss: its gradient alone
    a.mutable_grad().zero_();
    if (r == 1) (a * 6.f).sum().backward();
    average_grads(&g, {a}, r == 1);
    expect(a.grad()[0].item<float>() == 6.f, "one worker's gradient is not kept as it is");
    // no worker with a loss: no step, on both
    expect(!average_grads(&g, {a}, false), "a step without any loss");
  });
  for (int r = 0; r < 2; ++r) {
    ck_assert(stepped[r]);
    ck_assert_float_eq(seen[r][0], 5.5f);  // (1 + 10) / 2
    ck_assert_float_eq(seen[r][1], 11.f);  // (2 + 20) / 2
    ck_assert_float_eq(seen[r][2], 1.5f);  // worker 1 has a loss, not this gradient: (3 + 0) / 2
    ck_assert_float_eq(seen[r][3], 2.f);
    ck_assert(undefined_after[r]);
  }
}
END_TEST

START_TEST(broadcast_gives_worker_0s_weights) {
  float got[2] = {};
  two_workers([&](WorkerGroup& g) {
    auto w = torch::full({3}, static_cast<float>(g.rank() + 7));
    broadcast_params(&g, {w});
    got[g.rank()] = w[2].item<float>();
    std::vector<double> v{1.0 * g.rank(), 2.0};
    g.sum(v);
    expect(v[0] == 1.0 && v[1] == 4.0, "sum");
    expect(g.any(g.rank() == 1) && !g.any(false), "any");
  });
  ck_assert_float_eq(got[0], 7.f);
  ck_assert_float_eq(got[1], 7.f);
}
END_TEST

START_TEST(a_worker_that_never_joins_times_out) {
  WorkerPlace p;
  p.size = 2;
  p.timeout_s = 1;
  WorkerGroup g(p);
  try {
    g.connect();
    ck_abort_msg("connect() returned without worker 1");
  } catch (const std::runtime_error& e) {
    ck_assert_msg(std::string(e.what()).find("waiting for the 2 workers") != std::string::npos, "%s", e.what());
  }
}
END_TEST

START_TEST(bad_places_are_refused) {
  WorkerPlace p;
  p.size = 2;
  p.rank = 2;
  ck_assert_msg(([&] {
                  try {
                    check_place(p);
                  } catch (const std::invalid_argument&) {
                    return true;
                  }
                  return false;
                })(),
                "rank 2 of 2 accepted");
  p.rank = 1;
  p.store_port = 0;  // nothing to connect to
  try {
    check_place(p);
    ck_abort_msg("port 0 accepted for worker 1");
  } catch (const std::invalid_argument&) {
  }
}
END_TEST

int main() {
  Suite* s = suite_create("learn_workers");
  TCase* tc = tcase_create("core");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, gradients_are_averaged_over_workers_with_a_loss);
  tcase_add_test(tc, broadcast_gives_worker_0s_weights);
  tcase_add_test(tc, a_worker_that_never_joins_times_out);
  tcase_add_test(tc, bad_places_are_refused);
  suite_add_tcase(s, tc);
  return test_support::run_suite(s);
}
