#include "vmha/transport/ucx_transport.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>

#include <cstring>

#include "vmha/transport/handshake.h"
#include "vmha/transport/handshake_listener.h"
#include "vmha/transport/socket_channel.h"
#include "vmha/transport/ucx_channel.h"
#include "vmha/transport/ucx_core.h"

namespace vmha {

Result<HostPort> parse_host_port(const std::string& address) {
  auto colon = address.rfind(':');
  if (colon == std::string::npos || colon == 0)
    return Status::error("address '" + address + "': expected HOST:PORT (e.g. 10.0.0.2:7000)");
  std::string host = address.substr(0, colon);
  std::string port = address.substr(colon + 1);
  if (port.empty() || port.size() > 5 || port.find_first_not_of("0123456789") != std::string::npos ||
      std::stoul(port) > 65535)
    return Status::error("address '" + address + "': port '" + port + "' is not a number from 0 to 65535");
  return HostPort{host, static_cast<std::uint16_t>(std::stoul(port))};
}

namespace ucx {
namespace {

Result<sockaddr_in> resolve(const std::string& address) {
  auto hp = parse_host_port(address);
  if (!hp.ok()) return hp.status();
  addrinfo hints{};
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  int rc = ::getaddrinfo(hp.value().host.c_str(), nullptr, &hints, &res);
  if (rc != 0 || res == nullptr)
    return Status::error("address '" + address + "': cannot resolve host '" + hp.value().host +
                         "': " + ::gai_strerror(rc));
  sockaddr_in sin{};
  std::memcpy(&sin, res->ai_addr, sizeof sin);
  ::freeaddrinfo(res);
  sin.sin_port = htons(hp.value().port);
  return sin;
}

struct Region {
  void* base = nullptr;
  std::size_t length = 0;
  ucp_mem_h memh = nullptr;
  std::vector<std::uint8_t> packed_rkey;
};

class UcxTransport final : public Transport {
 public:
  explicit UcxTransport(std::shared_ptr<Core> core) : core_(std::move(core)) {}
  ~UcxTransport() override;

  Result<LocalRegion> allocate_region(std::size_t length) override;
  Result<std::uint32_t> register_region(void* base, std::size_t length) override;
  Result<std::unique_ptr<Channel>> connect(const std::string& address, const Authenticator& auth,
                                           std::chrono::milliseconds timeout) override;
  Status listen(const std::string& address) override;
  std::string listen_address() const override { return listen_address_; }
  Result<std::unique_ptr<Channel>> accept(const Authenticator& auth, std::chrono::milliseconds timeout) override;

 private:
  Result<std::uint32_t> add_region(ucp_mem_h memh, void* base, std::size_t length);
  // After authentication on `socket`: exchange worker addresses on it and
  // open the UCX endpoint to the peer.
  Result<std::unique_ptr<UcxChannel>> join_ucx(SocketChannel& socket, const std::string& peer);

  std::shared_ptr<Core> core_;
  std::vector<Region> regions_;
  std::unique_ptr<HandshakeListener> listener_;
  std::string listen_address_;
};

UcxTransport::~UcxTransport() {
  listener_.reset();
  for (auto& g : regions_) ucp_mem_unmap(core_->context(), g.memh);
}

Result<std::uint32_t> UcxTransport::add_region(ucp_mem_h memh, void* base, std::size_t length) {
  void* buf = nullptr;
  std::size_t size = 0;
  ucs_status_t s = ucp_rkey_pack(core_->context(), memh, &buf, &size);
  if (s != UCS_OK) {
    ucp_mem_unmap(core_->context(), memh);
    return Status::error("UCX: cannot pack a remote key: " + status_text(s));
  }
  Region g{base, length, memh, {}};
  g.packed_rkey.assign(static_cast<std::uint8_t*>(buf), static_cast<std::uint8_t*>(buf) + size);
  ucp_rkey_buffer_release(buf);
  regions_.push_back(std::move(g));
  return static_cast<std::uint32_t>(regions_.size() - 1);
}

Result<LocalRegion> UcxTransport::allocate_region(std::size_t length) {
  if (length == 0) return Status::error("allocate_region: empty region");
  ucp_mem_map_params_t p{};
  p.field_mask = UCP_MEM_MAP_PARAM_FIELD_ADDRESS | UCP_MEM_MAP_PARAM_FIELD_LENGTH | UCP_MEM_MAP_PARAM_FIELD_FLAGS;
  p.address = nullptr;
  p.length = length;
  p.flags = UCP_MEM_MAP_ALLOCATE;
  ucp_mem_h memh = nullptr;
  ucs_status_t s = ucp_mem_map(core_->context(), &p, &memh);
  if (s != UCS_OK) return Status::error("UCX: cannot allocate " + std::to_string(length) + " bytes: " + status_text(s));
  ucp_mem_attr_t attr{};
  attr.field_mask = UCP_MEM_ATTR_FIELD_ADDRESS | UCP_MEM_ATTR_FIELD_LENGTH;
  s = ucp_mem_query(memh, &attr);
  if (s != UCS_OK) {
    ucp_mem_unmap(core_->context(), memh);
    return Status::error("UCX: cannot query allocated memory: " + status_text(s));
  }
  auto id = add_region(memh, attr.address, length);
  if (!id.ok()) return id.status();
  return LocalRegion{id.value(), attr.address, length};
}

Result<std::uint32_t> UcxTransport::register_region(void* base, std::size_t length) {
  if (base == nullptr || length == 0) return Status::error("register_region: empty region");
  ucp_mem_map_params_t p{};
  p.field_mask = UCP_MEM_MAP_PARAM_FIELD_ADDRESS | UCP_MEM_MAP_PARAM_FIELD_LENGTH;
  p.address = base;
  p.length = length;
  ucp_mem_h memh = nullptr;
  ucs_status_t s = ucp_mem_map(core_->context(), &p, &memh);
  if (s != UCS_OK) return Status::error("UCX: cannot register " + std::to_string(length) + " bytes: " + status_text(s));
  return add_region(memh, base, length);
}

Result<std::unique_ptr<UcxChannel>> UcxTransport::join_ucx(SocketChannel& socket, const std::string& peer) {
  auto mine = core_->worker_address();
  if (!mine.ok()) return mine.status();
  if (Status s = socket.send(WorkerAddressMsg{mine.value()}.to_frame()); !s.ok()) return s;
  auto f = socket.receive(core_->options().handshake_timeout);
  if (!f.ok()) return f.status().context("waiting for the UCX address of " + peer + ": ");
  auto theirs = WorkerAddressMsg::from(f.value());
  if (!theirs.ok()) return theirs.status().context("from " + peer + ": ");
  // UCX 1.13 aborts the process on some malformed addresses it unpacks. The
  // peer proved the job's secret, but its address is checked as far as its
  // form allows before UCX sees it: the same header as ours (UCX's address
  // version and flags: both sides run this build) and a sane length.
  const std::vector<std::uint8_t>& a = theirs.value().address;
  const std::vector<std::uint8_t>& own = mine.value();
  if (a.size() < 9 || a.size() > 16384 || own.empty() || a[0] != own[0])
    return Status::error("from " + peer + ": a UCX worker address unlike this build's (" + std::to_string(a.size()) +
                         " bytes, header " + std::to_string(a.empty() ? -1 : a[0]) + "): refused");
  auto ch = std::make_unique<UcxChannel>(core_, peer);
  if (Status s = ch->open(theirs.value().address); !s.ok()) return s;
  return ch;
}

Result<std::unique_ptr<Channel>> UcxTransport::connect(const std::string& address, const Authenticator& auth,
                                                       std::chrono::milliseconds timeout) {
  auto sin = resolve(address);
  if (!sin.ok()) return sin.status();
  auto limit = std::min(timeout, core_->options().handshake_timeout);
  auto fd = tcp_connect(sin.value(), "backup " + address, limit);
  if (!fd.ok()) return fd.status();
  SocketChannel socket(fd.value(), address, core_->options().send_timeout);
  if (Status s = authenticate_as_primary(socket, auth, limit); !s.ok()) {
    socket.close();
    return s.context("backup " + address + ": ");
  }
  // Authenticated: only now does UCX get a worker (and listening sockets).
  socket.set_max_payload(kMaxFramePayload);
  auto ch = join_ucx(socket, address);
  if (!ch.ok()) return ch.status().context("backup " + address + ": ");
  if (core_->options().progress_thread) core_->start_progress_thread();
  RegionsMsg msg;
  for (std::size_t i = 0; i < regions_.size(); ++i)
    msg.regions.push_back(RegionInfo{static_cast<std::uint32_t>(i), reinterpret_cast<std::uint64_t>(regions_[i].base),
                                     regions_[i].length, regions_[i].packed_rkey});
  // On the UCX stream: its arrival tells the backup that UCX connects. The
  // socket stays open as the connection's liveness signal.
  if (Status s = ch.value()->send(msg.to_frame()); !s.ok()) return s;
  ch.value()->watch_peer_socket(socket.release());
  return std::unique_ptr<Channel>(ch.take());
}

Status UcxTransport::listen(const std::string& address) {
  if (listener_) return Status::error("already listening on " + listen_address_);
  auto sin = resolve(address);
  if (!sin.ok()) return sin.status();
  auto l = HandshakeListener::open(sin.value(), address);
  if (!l.ok()) return l.status();
  listener_ = l.take();
  listen_address_ = listener_->address();
  return {};
}

Result<std::unique_ptr<Channel>> UcxTransport::accept(const Authenticator& auth, std::chrono::milliseconds timeout) {
  if (!listener_) return Status::error("accept: not listening");
  const auto& o = core_->options();
  auto socket = listener_->accept(auth, o.handshake_timeout, timeout, o.send_timeout);
  if (!socket.ok()) return socket.status();
  std::string peer = socket.value()->peer();
  socket.value()->set_max_payload(kMaxFramePayload);
  auto ch = join_ucx(*socket.value(), peer);
  if (!ch.ok()) return ch.status().context("primary " + peer + ": ");
  auto f = ch.value()->receive(o.handshake_timeout);
  if (!f.ok()) return f.status().context("waiting for the memory regions of " + peer + ": ");
  auto regions = RegionsMsg::from(f.value());
  if (!regions.ok()) return regions.status().context("from " + peer + ": ");
  if (Status s = ch.value()->adopt_regions(regions.take()); !s.ok()) return s;
  ch.value()->watch_peer_socket(socket.value()->release());
  return std::unique_ptr<Channel>(ch.take());
}

}  // namespace
}  // namespace ucx

Result<std::unique_ptr<Transport>> make_ucx_transport(const UcxOptions& options) {
  auto core = ucx::Core::create(options);
  if (!core.ok()) return core.status();
  return std::unique_ptr<Transport>(new ucx::UcxTransport(core.take()));
}

}  // namespace vmha
