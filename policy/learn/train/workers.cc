// The workers' group over c10d (workers.h): a FileStore on one host, a
// TCPStore under a secret-derived key prefix across hosts, ProcessGroupGloo.
#include "policy/learn/train/workers.h"

#include <sys/stat.h>
#include <unistd.h>

// ProcessGroupGloo.hpp declares the class only for builds with Gloo, which
// Debian's libtorch is.
#ifndef USE_C10D_GLOO
#define USE_C10D_GLOO 1
#endif
#include <torch/csrc/distributed/c10d/FileStore.hpp>
#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>
#include <torch/torch.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <thread>

#include "policy/learn/train/store_key.h"

namespace duet::learn {
namespace {

std::chrono::milliseconds millis(double s) { return std::chrono::milliseconds(static_cast<long long>(s * 1000)); }

// c10d's errors carry a C++ backtrace in what(); keep their message, and say
// which step of the group failed.
template <class F>
auto guarded(const std::string& what, F&& f) -> decltype(f()) {
  try {
    return f();
  } catch (const c10::Error& e) {
    throw std::runtime_error("workers: " + what + ": " + e.what_without_backtrace());
  } catch (const std::exception& e) {
    throw std::runtime_error("workers: " + what + ": " + e.what());
  }
}

bool loopback(const std::string& host) { return host == "localhost" || host.rfind("127.", 0) == 0 || host == "::1"; }

// Where this worker's Gloo connections listen: loopback when all workers are
// on this host (a FileStore, whatever GLOO_SOCKET_IFNAME says) or the store
// is on this host's loopback (a test cluster whose nodes are all 127.0.0.1);
// GLOO_SOCKET_IFNAME's interface when set (as PyTorch reads it); otherwise
// the address this host's name resolves to.
std::shared_ptr<::gloo::transport::Device> device(const WorkerPlace& p) {
  if (!p.store_path.empty()) return c10d::ProcessGroupGloo::createDeviceForHostname("127.0.0.1");
  if (const char* ifname = std::getenv("GLOO_SOCKET_IFNAME"); ifname && *ifname)
    return c10d::ProcessGroupGloo::createDeviceForInterface(ifname);
  if (loopback(p.store_host)) return c10d::ProcessGroupGloo::createDeviceForHostname("127.0.0.1");
  return c10d::ProcessGroupGloo::createDefaultDevice();
}

// The FileStore's directory must be this user's and closed to everyone
// else: another user who could enter it could read or replace the store.
void check_private_dir(const std::string& store_path) {
  const size_t slash = store_path.rfind('/');
  const std::string dir = slash == 0 ? "/" : store_path.substr(0, slash);
  struct stat st {};
  if (::lstat(dir.c_str(), &st) != 0)
    throw std::runtime_error("workers: the store's directory " + dir + ": " + std::strerror(errno));
  if (!S_ISDIR(st.st_mode) || st.st_uid != ::geteuid() || (st.st_mode & 077) != 0) {
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
    throw std::runtime_error("workers: the store's directory " + dir + " is not private (uid " +
                             std::to_string(st.st_uid) + ", mode " + mode + "; expected a directory of uid " +
                             std::to_string(::geteuid()) + " that only it can enter): refused");
  }
}

// Worker 0 sets this under the run's prefix as soon as its store exists; the
// others look for it under theirs (store_key.h).
constexpr const char* kGreeting = "greeting";
constexpr const char* kGreetingValue = "duet-train v1";
// How long a worker looks for the greeting once connected: it is set before
// worker 0 does anything else, so its absence means another secret.
constexpr double kGreetingWaitS = 10;

std::vector<std::uint8_t> bytes(const char* s) { return {s, s + std::strlen(s)}; }

void expect_greeting(c10d::Store& store, const std::string& where, double timeout_s) {
  const auto until = std::chrono::steady_clock::now() + millis(std::min(timeout_s, kGreetingWaitS));
  while (!store.check({kGreeting})) {
    if (std::chrono::steady_clock::now() >= until)
      throw std::runtime_error("workers: the store at " + where +
                               " holds no greeting under this worker's secret: refused (every worker must read "
                               "the same --store-secret file; or another run holds that port)");
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  if (store.get(kGreeting) != bytes(kGreetingValue))
    throw std::runtime_error("workers: the store at " + where + " greets with something else: refused");
}

}  // namespace

void check_place(const WorkerPlace& p) {
  if (p.size < 1) throw std::invalid_argument("workers: expected at least one worker, got " + std::to_string(p.size));
  if (p.rank < 0 || p.rank >= p.size)
    throw std::invalid_argument("workers: rank " + std::to_string(p.rank) + " is not in 0.." +
                                std::to_string(p.size - 1));
  if (!(p.timeout_s > 0)) throw std::invalid_argument("workers: the timeout must be positive");
  if (!p.store_path.empty()) {
    if (p.store_path.front() != '/' || p.store_path.back() == '/')
      throw std::invalid_argument("workers: the store's path " + p.store_path + " is not an absolute file name");
    return;
  }
  if (p.store_port < 0 || p.store_port > 65535 || (p.rank > 0 && p.store_port == 0))
    throw std::invalid_argument("workers: store port " + std::to_string(p.store_port) + " is not a port to connect to");
  if (p.rank > 0 && p.store_host.empty()) throw std::invalid_argument("workers: no store host to connect to");
  if (p.secret.size() < kMinStoreSecretBytes)
    throw std::invalid_argument("workers: a store on the network needs a shared secret of at least " +
                                std::to_string(kMinStoreSecretBytes) + " bytes (duet train --store-secret)");
}

struct WorkerGroup::Impl {
  WorkerPlace place;
  c10::intrusive_ptr<c10d::TCPStore> tcp;  // null for a FileStore
  c10::intrusive_ptr<c10d::Store> store;   // what Gloo uses: the FileStore, or tcp under the prefix
  c10::intrusive_ptr<c10d::ProcessGroupGloo> pg;
};

WorkerGroup::WorkerGroup(const WorkerPlace& p) : impl_(std::make_unique<Impl>()) {
  check_place(p);
  impl_->place = p;
  if (!p.store_path.empty()) {
    check_private_dir(p.store_path);
    impl_->store = guarded("opening the store " + p.store_path, [&] {
      auto fs = c10::make_intrusive<c10d::FileStore>(p.store_path, p.size);
      fs->setTimeout(millis(p.timeout_s));
      return c10::intrusive_ptr<c10d::Store>(fs);
    });
    impl_->place.secret.clear();
    return;
  }
  c10d::TCPStoreOptions so;
  so.port = static_cast<std::uint16_t>(p.store_port);
  so.isServer = p.rank == 0;
  so.numWorkers = static_cast<std::size_t>(p.size);
  so.waitWorkers = false;  // connect() waits, once the others are started
  so.timeout = millis(p.timeout_s);
  // worker 0 reaches its own store on loopback, whatever the others use
  const std::string host = p.rank == 0 ? "127.0.0.1" : p.store_host;
  const std::string where = host + ":" + std::to_string(p.store_port);
  impl_->tcp = guarded(p.rank == 0 ? "serving the store on port " + std::to_string(p.store_port)
                                   : "connecting to the store at " + where,
                       [&] { return c10::make_intrusive<c10d::TCPStore>(host, so); });
  auto prefixed = c10::make_intrusive<c10d::PrefixStore>(store_key_prefix(p.secret, p.scope), impl_->tcp);
  impl_->place.secret.clear();  // not kept longer than needed
  if (p.rank == 0)
    guarded("greeting in the store", [&] { prefixed->set(kGreeting, bytes(kGreetingValue)); });
  else
    guarded("looking for worker 0's greeting", [&] { expect_greeting(*prefixed, where, p.timeout_s); });
  impl_->store = prefixed;
}

WorkerGroup::~WorkerGroup() = default;

void WorkerGroup::connect() {
  const WorkerPlace& p = impl_->place;
  auto o = c10d::ProcessGroupGloo::Options::create(millis(p.timeout_s));
  o->threads = 1;  // the trainer runs on one thread; the collectives are small
  impl_->pg = guarded("waiting for the " + std::to_string(p.size) + " workers to join (timeout " +
                          std::to_string(static_cast<long>(p.timeout_s)) + " s)",
                      [&] {
                        o->devices.push_back(device(p));
                        return c10::make_intrusive<c10d::ProcessGroupGloo>(impl_->store, p.rank, p.size, o);
                      });
}

int WorkerGroup::rank() const { return impl_->place.rank; }
int WorkerGroup::size() const { return impl_->place.size; }
int WorkerGroup::store_port() const { return impl_->tcp ? impl_->tcp->getPort() : 0; }

c10d::ProcessGroup& WorkerGroup::group() {
  if (!impl_->pg) throw std::logic_error("workers: the group is used before connect()");
  return *impl_->pg;
}

void WorkerGroup::sum(std::vector<double>& v) {
  if (v.empty()) return;
  std::vector<at::Tensor> t{torch::tensor(v, torch::kFloat64)};
  collective("summing over the workers", [&] { group().allreduce(t)->wait(); });
  auto a = t[0].accessor<double, 1>();
  for (size_t i = 0; i < v.size(); ++i) v[i] = a[static_cast<std::int64_t>(i)];
}

void WorkerGroup::collective(const std::string& what, const std::function<void()>& f) {
  guarded(what, [&] { f(); });
}

bool WorkerGroup::any(bool b) {
  std::vector<double> v{b ? 1.0 : 0.0};
  sum(v);
  return v[0] > 0;
}

}  // namespace duet::learn
