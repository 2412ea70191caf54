// vmha-pull-bench: throughput and latency of one-sided page pulls over UCX
// between two processes on this host (the backup pulls, the primary exposes).
//
//   vmha-pull-bench [--tls LIST]... [--mib N] [--seconds S] [--register]
//                   [--registered-dest] [--json]
//
// For each UCX transport list and batch size it reports per-batch latency
// (p50/p99) and throughput, for scattered pages (one read per page) and for
// contiguous runs (coalesced into one read).
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "vmha/transport/ucx_transport.h"

using namespace vmha;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

namespace {

constexpr std::size_t kPage = 4096;

struct Point {
  std::string tls;
  std::size_t batch = 0;
  bool contiguous = false;
  double p50_us = 0, p99_us = 0, mb_per_s = 0;
  std::size_t batches = 0;
};

std::vector<std::uint8_t> bench_key() { return std::vector<std::uint8_t>(32, 0x42); }

int primary(const std::string& tls, const std::string& address, std::size_t bytes, bool reg) {
  UcxOptions o;
  o.transports = tls;
  o.network_address = "127.0.0.1";
  auto t = make_ucx_transport(o);
  if (!t.ok()) return std::fprintf(stderr, "primary: %s\n", t.status().message().c_str()), 1;
  std::vector<std::uint8_t> heap;
  if (reg) {
    heap.assign(bytes, 1);
    auto id = t.value()->register_region(heap.data(), bytes);
    if (!id.ok()) return std::fprintf(stderr, "primary: %s\n", id.status().message().c_str()), 1;
  } else {
    auto r = t.value()->allocate_region(bytes);
    if (!r.ok()) return std::fprintf(stderr, "primary: %s\n", r.status().message().c_str()), 1;
    std::memset(r.value().base, 1, bytes);
  }
  auto auth = SharedKeyAuthenticator::from_key(bench_key());
  auto ch = t.value()->connect(address, *auth.value(), 10s);
  if (!ch.ok()) return std::fprintf(stderr, "primary: %s\n", ch.status().message().c_str()), 1;
  // Serve until the backup says goodbye (the progress thread serves emulated reads).
  auto deadline = Clock::now() + 600s;
  while (Clock::now() < deadline) {
    auto f = ch.value()->receive(1000ms);
    if (f.ok() && f.value().type == MessageType::kBye) break;
    if (!f.ok() && !Channel::timed_out(f.status())) break;
  }
  ch.value()->close();
  return 0;
}

void kill_primary(pid_t pid) {
  ::kill(pid, SIGKILL);
  ::waitpid(pid, nullptr, 0);
}

// Where pulled pages land: the heap, or memory the backup's transport
// allocated (registered). Zeroed, so it is faulted in before timing.
std::uint8_t* pull_destination(Transport& t, std::size_t bytes, bool registered_dest, std::vector<std::uint8_t>* heap,
                               std::string* error) {
  std::uint8_t* base = nullptr;
  if (registered_dest) {
    auto r = t.allocate_region(bytes);
    if (!r.ok()) return *error = r.status().message(), nullptr;
    base = static_cast<std::uint8_t*>(r.value().base);
  } else {
    heap->resize(bytes);
    base = heap->data();
  }
  std::memset(base, 0, bytes);
  return base;
}

// Pulls batches of `batch` pages (random pages, or one random contiguous
// run) for `seconds`. False when nothing was measured (or *error is set).
bool measure_point(Channel& ch, std::uint8_t* dest, std::size_t pages, bool contiguous, std::size_t batch,
                   double seconds, std::mt19937_64& rng, Point* p, std::string* error) {
  std::vector<double> lat;
  std::size_t moved = 0;
  auto start = Clock::now();
  auto stop = start + std::chrono::duration<double>(seconds);
  for (int i = 0; i < 1000000 && Clock::now() < stop; ++i) {
    std::vector<PullOp> ops;
    if (contiguous) {
      std::size_t first = rng() % (pages - batch + 1);
      ops.push_back(PullOp{0, first * kPage, dest + first * kPage, batch * kPage});
    } else {
      for (std::size_t k = 0; k < batch; ++k) {
        std::size_t page = rng() % pages;
        ops.push_back(PullOp{0, page * kPage, dest + page * kPage, kPage});
      }
    }
    auto t0 = Clock::now();
    if (Status s = ch.pull(ops); !s.ok()) {
      *error = s.message();
      break;
    }
    lat.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
    moved += batch * kPage;
  }
  if (!error->empty() || lat.empty()) return false;
  double total_s = std::chrono::duration<double>(Clock::now() - start).count();
  std::sort(lat.begin(), lat.end());
  p->batch = batch;
  p->contiguous = contiguous;
  p->p50_us = lat[lat.size() / 2];
  p->p99_us = lat[std::min(lat.size() - 1, lat.size() * 99 / 100)];
  p->mb_per_s = static_cast<double>(moved) / total_s / 1e6;
  p->batches = lat.size();
  return true;
}

std::vector<Point> backup(const std::string& tls, std::size_t bytes, double seconds, bool reg, bool registered_dest,
                          std::string* error) {
  std::vector<Point> out;
  // Fork before UCX is initialised here: a UCX context must not cross fork().
  int fds[2];
  if (::pipe(fds) != 0) return *error = "pipe failed", out;
  std::fflush(nullptr);
  pid_t pid = ::fork();
  if (pid == 0) {
    ::close(fds[1]);
    char address[128] = {};
    ssize_t n = ::read(fds[0], address, sizeof address - 1);
    ::_exit(n > 0 ? primary(tls, address, bytes, reg) : 1);
  }
  ::close(fds[0]);
  UcxOptions o;
  o.transports = tls;
  o.network_address = "127.0.0.1";
  auto t = make_ucx_transport(o);
  Status s = t.ok() ? t.value()->listen("127.0.0.1:0") : t.status();
  std::string address = s.ok() ? t.value()->listen_address() : "";
  if (::write(fds[1], address.c_str(), address.size()) < 0 || !s.ok()) {
    ::close(fds[1]);
    *error = s.ok() ? "cannot hand the address to the primary" : s.message();
    kill_primary(pid);
    return out;
  }
  ::close(fds[1]);
  auto auth = SharedKeyAuthenticator::from_key(bench_key());
  auto ch = t.value()->accept(*auth.value(), 20s);
  if (!ch.ok()) {
    *error = ch.status().message();
    kill_primary(pid);
    return out;
  }
  const std::size_t pages = bytes / kPage;
  std::vector<std::uint8_t> heap_dest;
  std::uint8_t* dest = pull_destination(*t.value(), bytes, registered_dest, &heap_dest, error);
  if (!dest) return out;
  std::mt19937_64 rng(42);
  for (bool contiguous : {false, true}) {
    for (std::size_t batch : {1ul, 16ul, 64ul, 256ul, 1024ul}) {
      if (batch > pages) continue;
      Point p;
      if (!measure_point(*ch.value(), dest, pages, contiguous, batch, seconds, rng, &p, error)) break;
      p.tls = tls.empty() ? "default" : tls;
      out.push_back(p);
    }
  }
  (void)ch.value()->send(ByeMsg{}.to_frame());
  ch.value()->close();
  int status = 0;
  auto deadline = Clock::now() + 10s;
  while (::waitpid(pid, &status, WNOHANG) == 0 && Clock::now() < deadline) std::this_thread::sleep_for(5ms);
  if (Clock::now() >= deadline) kill_primary(pid);
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"vmha-pull-bench: one-sided page pull throughput and latency over UCX (two processes, this host)"};
  std::vector<std::string> tls_lists;
  std::size_t mib = 64;
  double seconds = 0.5;
  bool reg = false, json = false, registered_dest = false;
  app.add_option("--tls", tls_lists,
                 "UCX transport list (UCX_TLS syntax), repeatable; default: \"\" (UCX's choice: shared "
                 "memory here) and \"tcp\"");
  app.add_option("--mib", mib, "size of the primary's exposed region in MiB")->check(CLI::Range(1, 4096));
  app.add_option("--seconds", seconds, "time per measured point")->check(CLI::Range(0.05, 60.0));
  app.add_flag("--register", reg, "expose ordinary (malloc) memory with register_region instead of allocate_region");
  app.add_flag("--registered-dest", registered_dest,
               "pull into memory allocated (registered) by the backup's transport instead of the heap");
  app.add_flag("--json", json, "print JSON instead of a table");
  CLI11_PARSE(app, argc, argv);
  if (tls_lists.empty()) tls_lists = {"", "tcp"};

  std::vector<Point> all;
  for (const auto& tls : tls_lists) {
    std::string error;
    auto pts = backup(tls, mib << 20, seconds, reg, registered_dest, &error);
    if (!error.empty()) {
      std::fprintf(stderr, "vmha-pull-bench: transports '%s': %s\n", tls.c_str(), error.c_str());
      return 1;
    }
    all.insert(all.end(), pts.begin(), pts.end());
  }
  if (json) {
    std::printf("{\"page_size\": %zu, \"region_mib\": %zu, \"memory\": \"%s\", \"points\": [", kPage, mib,
                reg ? "registered" : "allocated");
    for (std::size_t i = 0; i < all.size(); ++i)
      std::printf(
          "%s\n  {\"transports\": \"%s\", \"batch_pages\": %zu, \"contiguous\": %s, \"p50_us\": %.1f, "
          "\"p99_us\": %.1f, \"mb_per_s\": %.1f, \"batches\": %zu}",
          i ? "," : "", all[i].tls.c_str(), all[i].batch, all[i].contiguous ? "true" : "false", all[i].p50_us,
          all[i].p99_us, all[i].mb_per_s, all[i].batches);
    std::printf("\n]}\n");
    return 0;
  }
  std::printf("%-10s %-11s %6s %10s %10s %10s %8s\n", "transports", "layout", "pages", "p50_us", "p99_us", "MB/s",
              "batches");
  for (const auto& p : all)
    std::printf("%-10s %-11s %6zu %10.1f %10.1f %10.1f %8zu\n", p.tls.c_str(),
                p.contiguous ? "contiguous" : "scattered", p.batch, p.p50_us, p.p99_us, p.mb_per_s, p.batches);
  return 0;
}
