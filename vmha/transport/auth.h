// Authentication of a replication channel: both ends prove they hold the job's
// secret before any memory is exposed (the primary sends its remote keys only
// after the backup has proved itself and accepted the primary's proof).
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "vmha/common/status.h"

namespace vmha {

class Authenticator {
 public:
  virtual ~Authenticator() = default;
  // Method name carried in Hello; both ends must use the same one.
  virtual std::string method() const = 0;
  // Proof that the caller, acting as `role`, saw `transcript` (both nonces).
  virtual Result<std::vector<std::uint8_t>> prove(std::string_view role,
                                                  std::span<const std::uint8_t> transcript) const = 0;
  // Error when `proof` was not made by a holder of the secret for this role/transcript.
  virtual Status verify(std::string_view role, std::span<const std::uint8_t> transcript,
                        std::span<const std::uint8_t> proof) const = 0;
};

// HMAC-SHA256 over role + transcript with a shared key (a file handed to both
// sides, e.g. by Slurm). Proofs are compared in constant time.
class SharedKeyAuthenticator final : public Authenticator {
 public:
  static constexpr std::size_t kMinKeyBytes = 16;
  static constexpr std::size_t kMaxKeyBytes = 4096;
  // The file must be a regular file, not accessible by group or others, and
  // hold kMinKeyBytes..kMaxKeyBytes bytes (all of them are the key).
  static Result<std::unique_ptr<Authenticator>> from_file(const std::string& path);
  static Result<std::unique_ptr<Authenticator>> from_key(std::span<const std::uint8_t> key);

  std::string method() const override { return "hmac-sha256"; }
  Result<std::vector<std::uint8_t>> prove(std::string_view role,
                                          std::span<const std::uint8_t> transcript) const override;
  Status verify(std::string_view role, std::span<const std::uint8_t> transcript,
                std::span<const std::uint8_t> proof) const override;

 private:
  explicit SharedKeyAuthenticator(std::vector<std::uint8_t> key) : key_(std::move(key)) {}
  std::vector<std::uint8_t> key_;
};

// MUNGE credentials: the proof is a credential from the local munged whose
// payload is role + transcript; it verifies when munged decodes it, the payload
// matches and it was made by the same user (uid) as the verifier. Both hosts
// need munged with the cluster's key, as Slurm already requires.
class MungeAuthenticator final : public Authenticator {
 public:
  // `socket` empty: munged's default socket.
  static Result<std::unique_ptr<Authenticator>> create(const std::string& socket = "");
  std::string method() const override { return "munge"; }
  Result<std::vector<std::uint8_t>> prove(std::string_view role,
                                          std::span<const std::uint8_t> transcript) const override;
  Status verify(std::string_view role, std::span<const std::uint8_t> transcript,
                std::span<const std::uint8_t> proof) const override;

 private:
  explicit MungeAuthenticator(std::string socket) : socket_(std::move(socket)) {}
  std::string socket_;
};

// HMAC-SHA256(key, message), exposed for tests (RFC 4231 vectors).
std::vector<std::uint8_t> hmac_sha256(std::span<const std::uint8_t> key, std::span<const std::uint8_t> message);

}  // namespace vmha
