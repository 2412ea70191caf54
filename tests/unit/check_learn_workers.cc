// Training workers (policy/learn/train/workers.h, grad_sync.h): two workers,
// one per thread, meet over c10d; the gradient averaging keeps their
// parameters identical. On one host they meet in a FileStore in a private
// directory and nothing of theirs listens beyond loopback; across hosts the
// TCPStore refuses a worker without the secret, and a client without it
// cannot name any key (issue 52). Whole trainings run as duet runs them, one
// process per worker, in tests/integration/train_workers.sh: two trainings
// on threads of one process are not reproducible here, because Debian's
// serial OpenBLAS (libopenblas0-serial 0.3.21) gives wrong sgemm results
// when two threads call it at once (two threads multiplying 96x96 matrices
// got 3,340 of 40,000 products wrong; with Debian's reference BLAS, none).
#include <dirent.h>
#include <sys/stat.h>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>
#include <torch/torch.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <functional>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "policy/learn/train/grad_sync.h"
#include "policy/learn/train/store_key.h"
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

// A directory as duet train --workers makes one: mkdtemp's, mode 0700.
struct TempDir {
  std::string path;
  TempDir() {
    std::string t = "/tmp/check_learn_workers.XXXXXX";
    if (!mkdtemp(t.data())) throw std::runtime_error("mkdtemp");
    path = t;
  }
  ~TempDir() {
    ::unlink((path + "/store").c_str());
    ::rmdir(path.c_str());
  }
};

// Two workers on this host: a FileStore in a private directory.
static WorkerPlace local_place(const TempDir& d) {
  WorkerPlace p;
  p.size = 2;
  p.timeout_s = 60;
  p.store_path = d.path + "/store";
  return p;
}

// Two workers as on two hosts: worker 0's TCPStore under a secret.
static WorkerPlace tcp_place(const std::string& secret = "0123456789abcdef-test") {
  WorkerPlace p;
  p.size = 2;
  p.timeout_s = 60;
  p.secret = secret;
  p.scope = "check_learn_workers " + std::to_string(getpid());
  return p;
}

// Runs f(group) for worker 0 and worker 1 of a two-worker group, each on its
// own thread; rethrows the first failure.
static void two_workers(const WorkerPlace& p0, const std::function<void(WorkerGroup&)>& f) {
  WorkerGroup g0(p0);  // the store (a TCPStore on a free port)
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
  TempDir d;
  two_workers(local_place(d), [&](WorkerGroup& g) {
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
  TempDir d;
  two_workers(local_place(d), [&](WorkerGroup& g) {
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
  TempDir d;
  WorkerPlace p = local_place(d);
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
  // a store on the network without a secret, or with a short one
  for (const char* secret : {"", "short"}) {
    WorkerPlace q = tcp_place(secret);
    try {
      check_place(q);
      ck_abort_msg("a TCP store with the secret '%s' accepted", secret);
    } catch (const std::invalid_argument& e) {
      ck_assert_msg(std::string(e.what()).find("secret") != std::string::npos, "%s", e.what());
    }
  }
  WorkerPlace rel;
  rel.store_path = "store";  // not absolute
  try {
    check_place(rel);
    ck_abort_msg("a relative store path accepted");
  } catch (const std::invalid_argument&) {
  }
}
END_TEST

// The local addresses of this process's listening TCP sockets (from
// /proc/net/tcp and tcp6, for the socket inodes among /proc/self/fd), each
// with whether it is a loopback address.
static std::vector<std::pair<std::string, bool>> listening_sockets() {
  std::set<std::string> inodes;
  if (DIR* d = opendir("/proc/self/fd")) {
    while (dirent* e = readdir(d)) {
      char target[256];
      const std::string fd = std::string("/proc/self/fd/") + e->d_name;
      const ssize_t n = readlink(fd.c_str(), target, sizeof target - 1);
      if (n <= 0) continue;
      target[n] = '\0';
      const std::string t = target;
      if (t.rfind("socket:[", 0) == 0) inodes.insert(t.substr(8, t.size() - 9));
    }
    closedir(d);
  }
  std::vector<std::pair<std::string, bool>> out;
  for (const char* table : {"/proc/self/net/tcp", "/proc/self/net/tcp6"}) {
    std::ifstream in(table);
    std::string line;
    std::getline(in, line);  // header
    while (std::getline(in, line)) {
      std::istringstream w(line);
      std::string sl, local, remote, st, queues, timer, retr, uid, timeout, inode;
      if (!(w >> sl >> local >> remote >> st >> queues >> timer >> retr >> uid >> timeout >> inode)) continue;
      if (st != "0A" || !inodes.count(inode)) continue;  // 0A: LISTEN
      const std::string addr = local.substr(0, local.find(':'));
      // 127.x.x.x is "..7F" (little-endian words); ::1, ::ffff:127.x.x.x
      const bool lo = addr.size() == 8 ? addr.compare(6, 2, "7F") == 0
                                       : addr == "00000000000000000000000001000000" ||
                                             (addr.rfind("0000000000000000FFFF0000", 0) == 0 &&
                                              addr.compare(30, 2, "7F") == 0);
      out.emplace_back(std::string(table) + " " + local, lo);
    }
  }
  return out;
}

// Issue 52 (a): two local workers (duet train --workers 2) meet in a
// FileStore: no store port, and nothing of theirs listens on an address
// other hosts could reach (Gloo on 127.0.0.1). The old TCPStore listened on
// every interface.
START_TEST(local_workers_listen_on_loopback_only) {
  std::vector<std::pair<std::string, bool>> seen;
  int port = -1;
  TempDir d;
  two_workers(local_place(d), [&](WorkerGroup& g) {
    std::vector<double> v{1.0};
    g.sum(v);  // both joined: every socket of the group exists now
    expect(v[0] == 2.0, "sum");
    if (g.rank() == 0) {
      seen = listening_sockets();
      port = g.store_port();
    }
    g.sum(v);  // worker 1 stays until worker 0 has looked
  });
  ck_assert_int_eq(port, 0);
  for (const auto& [where, lo] : seen) ck_assert_msg(lo, "a worker listens on %s, not on loopback", where.c_str());
  // the directory must be private
  chmod(d.path.c_str(), 0755);
  try {
    WorkerGroup g(local_place(d));
    ck_abort_msg("a store in a directory others can enter was used");
  } catch (const std::runtime_error& e) {
    ck_assert_msg(std::string(e.what()).find("not private") != std::string::npos, "%s", e.what());
  }
}
END_TEST

// Issue 52 (b): across hosts, worker 0's TCPStore listens everywhere; a
// worker with another secret is refused, a client without the secret finds
// none of the run's keys (not the greeting under its plain name, not under a
// prefix from another secret) and what it writes does not disturb the run;
// workers with the secret train together.
START_TEST(tcp_store_refuses_a_client_without_the_secret) {
  const WorkerPlace p0 = tcp_place();
  WorkerGroup g0(p0);
  const int port = g0.store_port();
  ck_assert_int_gt(port, 0);
  // c10d's TCPStore does listen beyond loopback (what the local workers'
  // FileStore avoids; this also shows listening_sockets() sees it)
  bool wide = false;
  for (const auto& [where, lo] : listening_sockets()) wide = wide || !lo;
  ck_assert_msg(wide, "the TCPStore on port %d was not seen listening beyond loopback", port);
  WorkerPlace other = p0;
  other.rank = 1;
  other.store_port = port;
  other.secret = "another secret, as long";
  other.timeout_s = 2;
  try {
    WorkerGroup g(other);
    ck_abort_msg("a worker with another secret joined");
  } catch (const std::runtime_error& e) {
    ck_assert_msg(std::string(e.what()).find("refused") != std::string::npos, "%s", e.what());
  }
  c10d::TCPStoreOptions so;
  so.port = static_cast<std::uint16_t>(port);
  so.isServer = false;
  so.waitWorkers = false;
  so.timeout = std::chrono::milliseconds(5000);
  c10d::TCPStore raw("127.0.0.1", so);
  ck_assert(!raw.check({"greeting"}));
  ck_assert(!raw.check({store_key_prefix("another secret, as long", p0.scope) + "/greeting"}));
  ck_assert(raw.check({store_key_prefix(p0.secret, p0.scope) + "/greeting"}));  // the key is there, under the prefix
  ck_assert(!raw.check({store_key_prefix(p0.secret, "another run") + "/greeting"}));
  for (const char* k : {"greeting", "0", "1", "rank_0", "/0"}) raw.set(k, {'x'});
  // the right secret: the two train together
  WorkerPlace p1 = p0;
  p1.rank = 1;
  p1.store_port = port;
  std::string err1;
  std::thread t([&] {
    try {
      WorkerGroup g1(p1);
      g1.connect();
      std::vector<double> v{2.0};
      g1.sum(v);
      expect(v[0] == 3.0, "sum on worker 1");
    } catch (const std::exception& e) {
      err1 = e.what();
    }
  });
  std::string err0;
  try {
    g0.connect();
    std::vector<double> v{1.0};
    g0.sum(v);
    expect(v[0] == 3.0, "sum on worker 0");
  } catch (const std::exception& e) {
    err0 = e.what();
  }
  t.join();
  ck_assert_msg(err0.empty() && err1.empty(), "worker 0: %s; worker 1: %s", err0.c_str(), err1.c_str());
}
END_TEST

START_TEST(store_key_prefix_depends_on_secret_and_scope) {
  const std::string a = store_key_prefix("0123456789abcdef", "slurm job 1 step 0");
  ck_assert_uint_eq(a.size(), 11 + 64);
  ck_assert(a.rfind("duet-train/", 0) == 0);
  ck_assert(a == store_key_prefix("0123456789abcdef", "slurm job 1 step 0"));
  ck_assert(a != store_key_prefix("0123456789abcdeF", "slurm job 1 step 0"));
  ck_assert(a != store_key_prefix("0123456789abcdef", "slurm job 1 step 1"));
  try {
    store_key_prefix("short", "x");
    ck_abort_msg("a 5-byte secret accepted");
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
  tcase_add_test(tc, local_workers_listen_on_loopback_only);
  tcase_add_test(tc, tcp_store_refuses_a_client_without_the_secret);
  tcase_add_test(tc, store_key_prefix_depends_on_secret_and_scope);
  suite_add_tcase(s, tc);
  return test_support::run_suite(s);
}
