// The workers' group over c10d (workers.h): TCPStore + ProcessGroupGloo.
#include "policy/learn/train/workers.h"

// ProcessGroupGloo.hpp declares the class only for builds with Gloo, which
// Debian's libtorch is.
#ifndef USE_C10D_GLOO
#define USE_C10D_GLOO 1
#endif
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>
#include <torch/torch.h>

#include <chrono>
#include <cstdlib>
#include <stdexcept>

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

// Where this worker's Gloo connections listen: loopback when the store is on
// this host's loopback (duet's own workers, or a test cluster whose nodes
// are all 127.0.0.1); GLOO_SOCKET_IFNAME's interface when set (as PyTorch
// reads it); otherwise the address this host's name resolves to.
std::shared_ptr<::gloo::transport::Device> device(const WorkerPlace& p) {
  if (const char* ifname = std::getenv("GLOO_SOCKET_IFNAME"); ifname && *ifname)
    return c10d::ProcessGroupGloo::createDeviceForInterface(ifname);
  if (loopback(p.store_host)) return c10d::ProcessGroupGloo::createDeviceForHostname("127.0.0.1");
  return c10d::ProcessGroupGloo::createDefaultDevice();
}

}  // namespace

void check_place(const WorkerPlace& p) {
  if (p.size < 1) throw std::invalid_argument("workers: expected at least one worker, got " + std::to_string(p.size));
  if (p.rank < 0 || p.rank >= p.size)
    throw std::invalid_argument("workers: rank " + std::to_string(p.rank) + " is not in 0.." +
                                std::to_string(p.size - 1));
  if (p.store_port < 0 || p.store_port > 65535 || (p.rank > 0 && p.store_port == 0))
    throw std::invalid_argument("workers: store port " + std::to_string(p.store_port) + " is not a port to connect to");
  if (p.rank > 0 && p.store_host.empty()) throw std::invalid_argument("workers: no store host to connect to");
  if (!(p.timeout_s > 0)) throw std::invalid_argument("workers: the timeout must be positive");
}

struct WorkerGroup::Impl {
  WorkerPlace place;
  c10::intrusive_ptr<c10d::TCPStore> store;
  c10::intrusive_ptr<c10d::ProcessGroupGloo> pg;
};

WorkerGroup::WorkerGroup(const WorkerPlace& p) : impl_(std::make_unique<Impl>()) {
  check_place(p);
  impl_->place = p;
  c10d::TCPStoreOptions so;
  so.port = static_cast<std::uint16_t>(p.store_port);
  so.isServer = p.rank == 0;
  so.numWorkers = static_cast<std::size_t>(p.size);
  so.waitWorkers = false;  // connect() waits, once the others are started
  so.timeout = millis(p.timeout_s);
  // worker 0 reaches its own store on loopback, whatever the others use
  const std::string host = p.rank == 0 ? "127.0.0.1" : p.store_host;
  const std::string where = host + ":" + std::to_string(p.store_port);
  impl_->store = guarded(p.rank == 0 ? "serving the store on port " + std::to_string(p.store_port)
                                     : "connecting to the store at " + where,
                         [&] { return c10::make_intrusive<c10d::TCPStore>(host, so); });
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
int WorkerGroup::store_port() const { return impl_->store->getPort(); }

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
