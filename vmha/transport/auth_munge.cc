#include <munge.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>

#include "vmha/transport/auth.h"

namespace vmha {
namespace {

std::vector<std::uint8_t> payload_for(std::string_view role, std::span<const std::uint8_t> transcript) {
  std::vector<std::uint8_t> m(role.begin(), role.end());
  m.push_back(0);
  m.insert(m.end(), transcript.begin(), transcript.end());
  return m;
}

// munge_ctx_t owner; the socket option only when one was given.
struct MungeCtx {
  munge_ctx_t ctx = munge_ctx_create();
  ~MungeCtx() {
    if (ctx) munge_ctx_destroy(ctx);
  }
  Status init(const std::string& socket) {
    if (!ctx) return Status::error("munge: cannot allocate a context");
    if (!socket.empty() && munge_ctx_set(ctx, MUNGE_OPT_SOCKET, socket.c_str()) != EMUNGE_SUCCESS)
      return Status::error(std::string("munge: bad socket option: ") + munge_ctx_strerror(ctx));
    return {};
  }
};

}  // namespace

Result<std::unique_ptr<Authenticator>> MungeAuthenticator::create(const std::string& socket) {
  // Probe munged once, so a missing daemon is reported at start, not mid-handshake.
  MungeCtx c;
  if (Status s = c.init(socket); !s.ok()) return s;
  char* cred = nullptr;
  munge_err_t e = munge_encode(&cred, c.ctx, nullptr, 0);
  if (e != EMUNGE_SUCCESS)
    return Status::error(std::string("munge: cannot get a credential from munged: ") + munge_strerror(e));
  std::free(cred);
  return std::unique_ptr<Authenticator>(new MungeAuthenticator(socket));
}

Result<std::vector<std::uint8_t>> MungeAuthenticator::prove(std::string_view role,
                                                            std::span<const std::uint8_t> transcript) const {
  MungeCtx c;
  if (Status s = c.init(socket_); !s.ok()) return s;
  auto payload = payload_for(role, transcript);
  char* cred = nullptr;
  munge_err_t e = munge_encode(&cred, c.ctx, payload.data(), static_cast<int>(payload.size()));
  if (e != EMUNGE_SUCCESS) return Status::error(std::string("munge_encode: ") + munge_strerror(e));
  std::vector<std::uint8_t> out(cred, cred + std::strlen(cred));
  std::free(cred);
  return out;
}

Status MungeAuthenticator::verify(std::string_view role, std::span<const std::uint8_t> transcript,
                                  std::span<const std::uint8_t> proof) const {
  MungeCtx c;
  if (Status s = c.init(socket_); !s.ok()) return s;
  std::string cred(proof.begin(), proof.end());
  void* data = nullptr;
  int len = 0;
  uid_t uid = 0;
  gid_t gid = 0;
  munge_err_t e = munge_decode(cred.c_str(), c.ctx, &data, &len, &uid, &gid);
  std::vector<std::uint8_t> got;
  if (data) {
    got.assign(static_cast<std::uint8_t*>(data), static_cast<std::uint8_t*>(data) + len);
    std::free(data);
  }
  if (e != EMUNGE_SUCCESS) return Status::error(std::string("munge credential refused: ") + munge_strerror(e));
  if (uid != ::geteuid())
    return Status::error("munge credential belongs to uid " + std::to_string(uid) + ", this job runs as uid " +
                         std::to_string(::geteuid()));
  if (got != payload_for(role, transcript)) return Status::error("munge credential was made for another handshake");
  return {};
}

}  // namespace vmha
