#include "vmha/transport/ucx_transport.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>

#include <cstring>
#include <deque>
#include <mutex>

#include "vmha/transport/handshake.h"
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
    return Status::error("address '" + address + "': port '" + port +
                         "' is not a number from 0 to 65535");
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

std::string to_text(const sockaddr_storage& ss) {
  char host[INET6_ADDRSTRLEN] = "?";
  unsigned port = 0;
  if (ss.ss_family == AF_INET) {
    auto* s = reinterpret_cast<const sockaddr_in*>(&ss);
    ::inet_ntop(AF_INET, &s->sin_addr, host, sizeof host);
    port = ntohs(s->sin_port);
  } else if (ss.ss_family == AF_INET6) {
    auto* s = reinterpret_cast<const sockaddr_in6*>(&ss);
    ::inet_ntop(AF_INET6, &s->sin6_addr, host, sizeof host);
    port = ntohs(s->sin6_port);
  }
  return std::string(host) + ":" + std::to_string(port);
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
  Result<std::unique_ptr<Channel>> accept(const Authenticator& auth,
                                          std::chrono::milliseconds timeout) override;

 private:
  static void on_conn_request(ucp_conn_request_h request, void* arg);

  Result<std::uint32_t> add_region(ucp_mem_h memh, void* base, std::size_t length);

  std::shared_ptr<Core> core_;
  std::vector<Region> regions_;
  ucp_listener_h listener_ = nullptr;
  std::string listen_address_;
  std::mutex pending_mutex_;
  std::deque<ucp_conn_request_h> pending_;
};

UcxTransport::~UcxTransport() {
  {
    std::lock_guard<std::mutex> lock(pending_mutex_);
    for (auto r : pending_) ucp_listener_reject(listener_, r);
    pending_.clear();
  }
  if (listener_) ucp_listener_destroy(listener_);
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
  p.field_mask = UCP_MEM_MAP_PARAM_FIELD_ADDRESS | UCP_MEM_MAP_PARAM_FIELD_LENGTH |
                 UCP_MEM_MAP_PARAM_FIELD_FLAGS;
  p.address = nullptr;
  p.length = length;
  p.flags = UCP_MEM_MAP_ALLOCATE;
  ucp_mem_h memh = nullptr;
  ucs_status_t s = ucp_mem_map(core_->context(), &p, &memh);
  if (s != UCS_OK)
    return Status::error("UCX: cannot allocate " + std::to_string(length) + " bytes: " + status_text(s));
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
  if (s != UCS_OK)
    return Status::error("UCX: cannot register " + std::to_string(length) + " bytes: " + status_text(s));
  return add_region(memh, base, length);
}

Result<std::unique_ptr<Channel>> UcxTransport::connect(const std::string& address,
                                                       const Authenticator& auth,
                                                       std::chrono::milliseconds timeout) {
  auto sin = resolve(address);
  if (!sin.ok()) return sin.status();
  if (core_->options().progress_thread) core_->start_progress_thread();
  auto ch = std::make_unique<UcxChannel>(core_, address);
  if (Status s = ch->open_client(reinterpret_cast<const sockaddr*>(&sin.value()), sizeof(sockaddr_in));
      !s.ok())
    return s;
  ch->set_max_payload(kMaxUnauthenticatedPayload);
  if (Status s = authenticate_as_primary(*ch, auth, std::min(timeout, core_->options().handshake_timeout));
      !s.ok()) {
    ch->close();
    return s.context("backup " + address + ": ");
  }
  ch->set_max_payload(kMaxFramePayload);
  RegionsMsg msg;
  for (std::size_t i = 0; i < regions_.size(); ++i)
    msg.regions.push_back(RegionInfo{static_cast<std::uint32_t>(i),
                                     reinterpret_cast<std::uint64_t>(regions_[i].base),
                                     regions_[i].length, regions_[i].packed_rkey});
  if (Status s = ch->send(msg.to_frame()); !s.ok()) return s;
  return std::unique_ptr<Channel>(std::move(ch));
}

void UcxTransport::on_conn_request(ucp_conn_request_h request, void* arg) {
  auto* self = static_cast<UcxTransport*>(arg);
  std::lock_guard<std::mutex> lock(self->pending_mutex_);
  self->pending_.push_back(request);
}

Status UcxTransport::listen(const std::string& address) {
  if (listener_) return Status::error("already listening on " + listen_address_);
  auto sin = resolve(address);
  if (!sin.ok()) return sin.status();
  ucp_listener_params_t p{};
  p.field_mask = UCP_LISTENER_PARAM_FIELD_SOCK_ADDR | UCP_LISTENER_PARAM_FIELD_CONN_HANDLER;
  p.sockaddr.addr = reinterpret_cast<const sockaddr*>(&sin.value());
  p.sockaddr.addrlen = sizeof(sockaddr_in);
  p.conn_handler.cb = on_conn_request;
  p.conn_handler.arg = this;
  ucs_status_t s = ucp_listener_create(core_->worker(), &p, &listener_);
  if (s != UCS_OK) return Status::error("cannot listen on " + address + ": " + status_text(s));
  ucp_listener_attr_t attr{};
  attr.field_mask = UCP_LISTENER_ATTR_FIELD_SOCKADDR;
  listen_address_ = address;
  if (ucp_listener_query(listener_, &attr) == UCS_OK) listen_address_ = to_text(attr.sockaddr);
  return {};
}

Result<std::unique_ptr<Channel>> UcxTransport::accept(const Authenticator& auth,
                                                      std::chrono::milliseconds timeout) {
  if (!listener_) return Status::error("accept: not listening");
  auto deadline = Clock::now() + timeout;
  ucp_conn_request_h request = nullptr;
  while (request == nullptr) {
    {
      std::lock_guard<std::mutex> lock(pending_mutex_);
      if (!pending_.empty()) {
        request = pending_.front();
        pending_.pop_front();
        break;
      }
    }
    if (Clock::now() >= deadline)
      return Status::error("timeout: no primary connected to " + listen_address_ + " within " +
                           std::to_string(timeout.count()) + " ms");
    core_->progress_or_wait(deadline);
  }
  std::string peer = "primary";
  ucp_conn_request_attr_t attr{};
  attr.field_mask = UCP_CONN_REQUEST_ATTR_FIELD_CLIENT_ADDR;
  if (ucp_conn_request_query(request, &attr) == UCS_OK) peer = to_text(attr.client_address);
  auto ch = std::make_unique<UcxChannel>(core_, peer);
  if (Status s = ch->open_server(request); !s.ok()) return s;
  ch->set_max_payload(kMaxUnauthenticatedPayload);
  if (Status s = authenticate_as_backup(*ch, auth, core_->options().handshake_timeout); !s.ok()) {
    ch->close();
    return s;
  }
  ch->set_max_payload(kMaxFramePayload);
  auto f = ch->receive(core_->options().handshake_timeout);
  if (!f.ok()) return f.status().context("waiting for the memory regions of " + peer + ": ");
  auto regions = RegionsMsg::from(f.value());
  if (!regions.ok()) return regions.status().context("from " + peer + ": ");
  if (Status s = ch->adopt_regions(regions.take()); !s.ok()) return s;
  return std::unique_ptr<Channel>(std::move(ch));
}

}  // namespace
}  // namespace ucx

Result<std::unique_ptr<Transport>> make_ucx_transport(const UcxOptions& options) {
  auto core = ucx::Core::create(options);
  if (!core.ok()) return core.status();
  return std::unique_ptr<Transport>(new ucx::UcxTransport(core.take()));
}

}  // namespace vmha
