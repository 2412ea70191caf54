// What a peer can do to the backup before authentication. Raw TCP clients
// send garbage (zeros, random bytes, a valid header announcing a huge payload,
// a truncated valid frame, nothing at all): the backup's accept() reports each
// as an error and stays alive, a real primary still authenticates afterwards,
// and silent peers do not hold it up. With a loopback address nothing of the
// process listens on another address, before or after UCX is connected. The
// fuzzing entry survives arbitrary input.

#include <arpa/inet.h>
#include <dirent.h>
#include <sys/stat.h>
#include <netinet/in.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "vmha/protocol/crc32c.h"
#include "vmha/protocol/messages.h"
#include "vmha/transport/handshake_fuzz_entry.h"
#include "vmha/transport/net_devices.h"
#include "vmha/transport/ucx_transport.h"

// Check defines macros (fail, ...) that clash with C++ headers: include it last.
#include <check.h>

using namespace std::chrono_literals;
using vmha::Channel;
using vmha::make_ucx_transport;
using vmha::Result;
using vmha::SharedKeyAuthenticator;
using vmha::Transport;
using vmha::UcxOptions;

namespace {

std::vector<std::uint8_t> key() { return std::vector<std::uint8_t>(32, 0x11); }

std::unique_ptr<Transport> transport(std::chrono::milliseconds handshake_timeout = 5s) {
  UcxOptions o;
  o.network_address = "127.0.0.1";
  o.handshake_timeout = handshake_timeout;
  auto t = make_ucx_transport(o);
  ck_assert_msg(t.ok(), "transport: %s", t.ok() ? "" : t.status().message().c_str());
  return t.take();
}

std::uint16_t port_of(const std::string& address) {
  return static_cast<std::uint16_t>(std::stoul(address.substr(address.rfind(':') + 1)));
}

// A raw client: connects to 127.0.0.1:port and sends `bytes`.
int raw_connect(std::uint16_t port, const std::vector<std::uint8_t>& bytes) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  ck_assert_int_ge(fd, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ck_assert_msg(::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0, "connect: %s", std::strerror(errno));
  if (!bytes.empty())
    ck_assert_int_eq(::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL), static_cast<long>(bytes.size()));
  return fd;
}

// A real primary in a thread: one allocated page, then connect().
struct Primary {
  std::unique_ptr<Transport> t = transport();
  std::unique_ptr<Channel> channel;
  std::string error;
  std::thread thread;

  void start(const std::string& address) {
    auto r = t->allocate_region(4096);
    ck_assert(r.ok());
    thread = std::thread([this, address] {
      auto auth = SharedKeyAuthenticator::from_key(key());
      auto ch = t->connect(address, *auth.value(), 20s);
      if (ch.ok())
        channel = ch.take();
      else
        error = ch.status().message();
    });
  }
  void join() {
    if (thread.joinable()) thread.join();
  }
};

std::vector<std::uint8_t> valid_hello() {
  vmha::HelloMsg h;
  h.method = "hmac-sha256";
  return vmha::encode_frame(h.to_frame());
}

// A header that passes every check (magic, version, type, header CRC) but
// announces a payload far above the pre-authentication limit.
std::vector<std::uint8_t> huge_length_header() {
  auto f = vmha::encode_frame(vmha::MessageType::kHello, 0, std::vector<std::uint8_t>(8, 0));
  f.resize(vmha::kFrameHeaderSize);
  auto put32 = [&f](std::size_t at, std::uint32_t v) {
    for (int i = 0; i < 4; ++i) f[at + i] = static_cast<std::uint8_t>(v >> (8 * i));
  };
  put32(16, 0x7fffffff);
  put32(28, vmha::crc32c(0, f.data(), 28));  // header CRC over bytes 0..27
  return f;
}

struct Garbage {
  const char* name;
  std::vector<std::uint8_t> bytes;
  const char* expect;  // in accept()'s error
};

std::vector<Garbage> garbage() {
  std::mt19937 rng(7);
  std::vector<std::uint8_t> random(4096);
  for (auto& b : random) b = static_cast<std::uint8_t>(rng());
  auto hello = valid_hello();
  hello.resize(hello.size() - 5);
  return {
      {"32 zero bytes", std::vector<std::uint8_t>(32, 0), "magic"},
      {"4 KiB random", random, "magic"},
      {"huge length", huge_length_header(), "4096"},
      {"truncated Hello", hello, "truncated Hello frame"},
      {"8 bytes, then close", std::vector<std::uint8_t>(8, 0xff), "lost"},
  };
}

}  // namespace

START_TEST(garbage_is_refused_and_a_primary_still_connects) {
  auto backup = transport();
  ck_assert(backup->listen("127.0.0.1:0").ok());
  std::uint16_t port = port_of(backup->listen_address());
  auto auth = SharedKeyAuthenticator::from_key(key());
  for (const auto& g : garbage()) {
    int fd = raw_connect(port, g.bytes);
    ::shutdown(fd, SHUT_WR);  // the peer is done sending
    auto r = backup->accept(*auth.value(), 20s);
    ::close(fd);
    ck_assert_msg(!r.ok(), "%s: accepted", g.name);
    ck_assert_msg(!Channel::timed_out(r.status()), "%s: %s", g.name, r.status().message().c_str());
    ck_assert_msg(r.status().message().find(g.expect) != std::string::npos, "%s: expected '%s' in: %s", g.name,
                  g.expect, r.status().message().c_str());
    std::fprintf(stderr, "%s: refused: %s\n", g.name, r.status().message().c_str());
  }
  Primary p;
  p.start(backup->listen_address());
  auto ch = backup->accept(*auth.value(), 20s);
  p.join();
  ck_assert_msg(ch.ok(), "backup: %s", ch.ok() ? "" : ch.status().message().c_str());
  ck_assert_msg(p.channel != nullptr, "primary: %s", p.error.c_str());
  ck_assert_int_eq(ch.value()->remote_regions().size(), 1);
  // The connection carries frames over UCX now.
  ck_assert(p.channel->send(vmha::HeartbeatMsg{}.to_frame()).ok());
  auto f = ch.value()->receive(10s);
  ck_assert_msg(f.ok() && f.value().type == vmha::MessageType::kHeartbeat, "heartbeat: %s",
                f.ok() ? "other type" : f.status().message().c_str());
  ch.value()->close();
  p.channel->close();
}
END_TEST

START_TEST(silent_peers_do_not_hold_up_the_primary) {
  // A handshake timeout far beyond accept()'s: a backup that served one peer
  // at a time would wait on the silent ones and never reach the primary.
  auto backup = transport(120s);
  ck_assert(backup->listen("127.0.0.1:0").ok());
  std::uint16_t port = port_of(backup->listen_address());
  std::vector<int> silent;
  for (int i = 0; i < 8; ++i) silent.push_back(raw_connect(port, {}));
  // One more sends a valid Hello and then stalls before its Response.
  silent.push_back(raw_connect(port, valid_hello()));
  Primary p;
  p.start(backup->listen_address());
  auto auth = SharedKeyAuthenticator::from_key(key());
  auto ch = backup->accept(*auth.value(), 30s);
  p.join();
  ck_assert_msg(ch.ok(), "backup: %s", ch.ok() ? "" : ch.status().message().c_str());
  ck_assert_msg(p.channel != nullptr, "primary: %s", p.error.c_str());
  for (int fd : silent) ::close(fd);
  ch.value()->close();
  p.channel->close();
}
END_TEST

// Hundreds of peers that connect and say nothing, reconnecting as soon as
// they are dropped (the audit's starvation: 80 of them kept every keyed
// primary out for its whole 5 s): a silent connection costs the backup a
// descriptor, never a handshake, so the primary pairs at once.
START_TEST(a_primary_pairs_under_hundreds_of_idle_peers) {
  rlimit nofile{};
  getrlimit(RLIMIT_NOFILE, &nofile);
  nofile.rlim_cur = nofile.rlim_max;
  setrlimit(RLIMIT_NOFILE, &nofile);
  const int peers = nofile.rlim_cur > 3000 ? 1000 : 300;
  auto backup = transport();
  ck_assert(backup->listen("127.0.0.1:0").ok());
  std::uint16_t port = port_of(backup->listen_address());
  auto auth = SharedKeyAuthenticator::from_key(key());
  // The backup accepts from the start, as vmha backup does.
  Result<std::unique_ptr<Channel>> ch = vmha::Status::error("not yet");
  std::chrono::steady_clock::time_point paired_at;
  std::thread accepting([&] {
    ch = backup->accept(*auth.value(), 60s);
    paired_at = std::chrono::steady_clock::now();
  });
  std::atomic<bool> stop{false};
  std::vector<int> idle(static_cast<size_t>(peers), -1);
  for (int& fd : idle) fd = raw_connect(port, {});
  // Reconnects every idle peer the backup dropped, all along.
  std::thread churn([&] {
    while (!stop.load()) {
      for (int& fd : idle) {
        char b;
        if (::recv(fd, &b, 1, MSG_DONTWAIT) == 0) {  // dropped: back again
          ::close(fd);
          fd = raw_connect(port, {});
        }
      }
      std::this_thread::sleep_for(10ms);
    }
  });
  Primary p;
  const auto t0 = std::chrono::steady_clock::now();
  p.start(backup->listen_address());
  p.join();
  accepting.join();
  const double s = std::chrono::duration<double>(paired_at - t0).count();
  stop = true;
  churn.join();
  for (int fd : idle) ::close(fd);
  ck_assert_msg(ch.ok(), "backup: %s", ch.ok() ? "" : ch.status().message().c_str());
  ck_assert_msg(p.channel != nullptr, "primary: %s", p.error.c_str());
  std::fprintf(stderr, "%d idle peers reconnecting: the primary paired in %.3f s\n", peers, s);
  // Well under the audit's 5 s handshake limit, on a loaded host too.
  ck_assert_msg(s < 3.0, "the primary needed %.3f s among %d idle peers", s, peers);
  ch.value()->close();
  p.channel->close();
}
END_TEST

namespace {

// Local addresses (hex "ADDR:PORT" as in /proc/net/tcp*) of the listening
// TCP sockets this process holds.
std::vector<std::string> own_listeners() {
  std::set<std::string> inodes;
  if (DIR* d = ::opendir("/proc/self/fd")) {
    while (dirent* e = ::readdir(d)) {
      char target[256];
      std::string path = std::string("/proc/self/fd/") + e->d_name;
      ssize_t n = ::readlink(path.c_str(), target, sizeof target - 1);
      if (n <= 0) continue;
      target[n] = 0;
      if (std::strncmp(target, "socket:[", 8) == 0) inodes.insert(std::string(target + 8, std::strlen(target + 8) - 1));
    }
    ::closedir(d);
  }
  std::vector<std::string> out;
  for (const char* file : {"/proc/net/tcp", "/proc/net/tcp6"}) {
    std::ifstream in(file);
    std::string line;
    std::getline(in, line);  // header
    while (std::getline(in, line)) {
      std::istringstream s(line);
      std::string sl, local, remote, state, queues, tr, retr, uid, timeout, inode;
      s >> sl >> local >> remote >> state >> queues >> tr >> retr >> uid >> timeout >> inode;
      if (state == "0A" && inodes.count(inode)) out.push_back(local);  // 0A: LISTEN
    }
  }
  return out;
}

std::size_t check_loopback_only(const char* when) {
  auto listeners = own_listeners();
  for (const auto& l : listeners) {
    std::string addr = l.substr(0, l.find(':'));
    // 127.x.x.x in /proc/net/tcp's little-endian hex ends with "7F".
    bool loopback = addr.size() == 8 && addr.substr(6) == "7F";
    ck_assert_msg(loopback, "%s: the process listens on %s (hex, /proc/net/tcp*), not loopback", when, l.c_str());
  }
  std::fprintf(stderr, "%s: %zu listening sockets, all on loopback\n", when, listeners.size());
  return listeners.size();
}

}  // namespace

START_TEST(listens_only_on_the_given_address) {
  auto backup = transport();
  ck_assert(backup->listen("127.0.0.1:0").ok());
  check_loopback_only("listening");
  Primary p;
  p.start(backup->listen_address());
  auto auth = SharedKeyAuthenticator::from_key(key());
  auto ch = backup->accept(*auth.value(), 20s);
  p.join();
  ck_assert_msg(ch.ok(), "backup: %s", ch.ok() ? "" : ch.status().message().c_str());
  ck_assert_msg(p.channel != nullptr, "primary: %s", p.error.c_str());
  // Loopback and UCX's default transports: shared memory only, so the
  // handshake socket is the one listener (with tcp, UCX adds one per worker).
  const char* tls = std::getenv("UCX_TLS");
  std::size_t n = check_loopback_only("connected (both UCX workers exist)");
  if (tls == nullptr) ck_assert_msg(n == 1, "%zu listening sockets, expected only the handshake socket", n);
  ch.value()->close();
  p.channel->close();
}
END_TEST

START_TEST(fuzz_entry_survives_any_input) {
  std::mt19937 rng(1);
  auto hello = valid_hello();
  std::vector<std::vector<std::uint8_t>> seeds = {{}, std::vector<std::uint8_t>(32, 0), hello, huge_length_header()};
  auto with_response = hello;
  auto resp = vmha::encode_frame(vmha::ResponseMsg{std::vector<std::uint8_t>(32, 1)}.to_frame());
  with_response.insert(with_response.end(), resp.begin(), resp.end());
  seeds.push_back(with_response);
  for (const auto& s : seeds) ck_assert_int_eq(vmha_fuzz_backup_handshake(s.data(), s.size()), 0);
  // Mutations of the seeds: flipped bytes, cuts, appended noise.
  for (int i = 0; i < 20000; ++i) {
    auto in = seeds[rng() % seeds.size()];
    int edits = 1 + static_cast<int>(rng() % 4);
    for (int e = 0; e < edits; ++e) {
      switch (rng() % 3) {
        case 0:
          if (!in.empty()) in[rng() % in.size()] ^= static_cast<std::uint8_t>(1u << (rng() % 8));
          break;
        case 1:
          if (!in.empty()) in.resize(rng() % in.size());
          break;
        default:
          for (int k = static_cast<int>(rng() % 64); k > 0; --k) in.push_back(static_cast<std::uint8_t>(rng()));
      }
    }
    ck_assert_int_eq(vmha_fuzz_backup_handshake(in.data(), in.size()), 0);
  }
}
END_TEST

START_TEST(ucx_devices_follow_the_address) {
  auto lo = vmha::interface_for_address("127.0.0.1:7000");
  ck_assert_msg(lo.ok() && lo.value() == "lo", "127.0.0.1: %s",
                lo.ok() ? lo.value().c_str() : lo.status().message().c_str());
  auto any = vmha::interface_for_address("0.0.0.0:0");
  ck_assert_msg(any.ok() && any.value().empty(), "0.0.0.0 must leave UCX's devices alone");
  // RDMA ports are kept: they open no sockets.
  char dir[] = "/tmp/vmha-sysfs.XXXXXX";
  ck_assert(::mkdtemp(dir) != nullptr);
  std::string root = dir;
  for (const char* d : {"/class", "/class/infiniband", "/class/infiniband/mlx5_0", "/class/infiniband/mlx5_0/ports",
                        "/class/infiniband/mlx5_0/ports/1"})
    ck_assert(::mkdir((root + d).c_str(), 0700) == 0);
  ck_assert_str_eq(vmha::ucx_net_devices("eth0", root).c_str(), "eth0,mlx5_0:1");
  ck_assert_str_eq(vmha::ucx_net_devices("lo", root + "/none").c_str(), "lo");
  std::string rm = "rm -rf '" + root + "'";
  ck_assert(std::system(rm.c_str()) == 0);
}
END_TEST

int main() {
  Suite* s = suite_create("vmha_transport_preauth");
  TCase* tc = tcase_create("preauth");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, garbage_is_refused_and_a_primary_still_connects);
  tcase_add_test(tc, silent_peers_do_not_hold_up_the_primary);
  tcase_add_test(tc, a_primary_pairs_under_hundreds_of_idle_peers);
  tcase_add_test(tc, listens_only_on_the_given_address);
  tcase_add_test(tc, fuzz_entry_survives_any_input);
  tcase_add_test(tc, ucx_devices_follow_the_address);
  suite_add_tcase(s, tc);
  SRunner* sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed == 0 ? 0 : 1;
}
