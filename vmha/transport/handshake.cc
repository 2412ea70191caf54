#include "vmha/transport/handshake.h"

#include <sys/random.h>

#include <cerrno>
#include <cstring>

namespace vmha {
namespace {

using Clock = std::chrono::steady_clock;

Status random_nonce(Nonce& n) {
  std::size_t got = 0;
  for (int tries = 0; got < n.size() && tries < 100; ++tries) {
    ssize_t r = ::getrandom(n.data() + got, n.size() - got, 0);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) return Status::error(std::string("getrandom: ") + std::strerror(errno));
    got += static_cast<std::size_t>(r);
  }
  if (got < n.size()) return Status::error("getrandom: short read");
  return {};
}

std::vector<std::uint8_t> transcript(const Nonce& primary, const Nonce& backup) {
  std::vector<std::uint8_t> t(primary.begin(), primary.end());
  t.insert(t.end(), backup.begin(), backup.end());
  return t;
}

std::chrono::milliseconds left(Clock::time_point deadline) {
  auto d = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
  return d.count() > 0 ? d : std::chrono::milliseconds(0);
}

// Receives the next frame; a peer's Error or a refusal becomes our error.
Result<Frame> next(Channel& ch, Clock::time_point deadline, const char* waiting_for) {
  auto f = ch.receive(left(deadline));
  if (!f.ok()) return f.status().context(std::string("authentication (waiting for ") + waiting_for + "): ");
  if (f.value().type == MessageType::kError) {
    auto e = ErrorMsg::from(f.value());
    return Status::error(std::string("authentication (waiting for ") + waiting_for + "): the peer reported: " +
                         (e.ok() ? e.value().reason : e.status().message()) + " (do both sides hold the same secret?)");
  }
  if (f.value().type == MessageType::kAuthResult) {
    auto a = AuthResultMsg::from(f.value());
    if (!a.ok()) return a.status();
    if (!a.value().accepted) return Status::error("authentication: refused by the backup: " + a.value().reason);
  }
  return f;
}

void refuse(Channel& ch, const std::string& reason) { (void)ch.send(AuthResultMsg{false, reason}.to_frame()); }

}  // namespace

Status authenticate_as_primary(Channel& ch, const Authenticator& auth, std::chrono::milliseconds timeout) {
  auto deadline = Clock::now() + timeout;
  HelloMsg hello;
  hello.method = auth.method();
  if (Status s = random_nonce(hello.nonce); !s.ok()) return s;
  if (Status s = ch.send(hello.to_frame()); !s.ok()) return s;

  auto f = next(ch, deadline, "Challenge");
  if (!f.ok()) return f.status();
  auto challenge = ChallengeMsg::from(f.value());
  if (!challenge.ok()) return challenge.status().context("authentication: ");
  auto t = transcript(hello.nonce, challenge.value().nonce);
  if (Status s = auth.verify("backup", t, challenge.value().proof); !s.ok()) {
    (void)ch.send(ErrorMsg{"backup failed authentication"}.to_frame());
    return s.context("authentication: backup " + ch.peer() +
                     " did not prove it holds the job's secret; memory not exposed: ");
  }
  auto proof = auth.prove("primary", t);
  if (!proof.ok()) return proof.status().context("authentication: ");
  if (Status s = ch.send(ResponseMsg{proof.take()}.to_frame()); !s.ok()) return s;

  f = next(ch, deadline, "AuthResult");
  if (!f.ok()) return f.status();
  auto result = AuthResultMsg::from(f.value());
  if (!result.ok()) return result.status().context("authentication: ");
  return {};  // accepted (a refusal became an error in next())
}

Status authenticate_as_backup(Channel& ch, const Authenticator& auth, std::chrono::milliseconds timeout) {
  auto deadline = Clock::now() + timeout;
  auto f = next(ch, deadline, "Hello");
  if (!f.ok()) return f.status();
  auto hello = HelloMsg::from(f.value());
  if (!hello.ok()) {
    refuse(ch, "malformed Hello");
    return hello.status().context("authentication: peer " + ch.peer() + " refused: ");
  }
  if (hello.value().method != auth.method()) {
    std::string why =
        "authentication method '" + hello.value().method + "' not accepted; this backup uses '" + auth.method() + "'";
    refuse(ch, why);
    return Status::error("authentication: peer " + ch.peer() + " refused: " + why);
  }
  ChallengeMsg challenge;
  if (Status s = random_nonce(challenge.nonce); !s.ok()) return s;
  auto t = transcript(hello.value().nonce, challenge.nonce);
  auto proof = auth.prove("backup", t);
  if (!proof.ok()) return proof.status().context("authentication: ");
  challenge.proof = proof.take();
  if (Status s = ch.send(challenge.to_frame()); !s.ok()) return s;

  f = next(ch, deadline, "Response");
  if (!f.ok()) return f.status().context("peer " + ch.peer() + ": ");
  auto response = ResponseMsg::from(f.value());
  if (!response.ok()) {
    refuse(ch, "malformed Response");
    return response.status().context("authentication: peer " + ch.peer() + " refused: ");
  }
  if (Status s = auth.verify("primary", t, response.value().proof); !s.ok()) {
    refuse(ch, "authentication failed");
    return s.context("authentication: peer " + ch.peer() + " refused: ");
  }
  return ch.send(AuthResultMsg{true, ""}.to_frame());
}

}  // namespace vmha
