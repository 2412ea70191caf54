#include <fcntl.h>
#include <nettle/hmac.h>
#include <nettle/memops.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "vmha/transport/auth.h"

namespace vmha {
namespace {

std::vector<std::uint8_t> tagged(std::string_view role, std::span<const std::uint8_t> transcript) {
  std::string m = "vmha-auth-v1 ";
  m.append(role);
  m.push_back('\0');
  m.append(reinterpret_cast<const char*>(transcript.data()), transcript.size());
  return {m.begin(), m.end()};
}

}  // namespace

std::vector<std::uint8_t> hmac_sha256(std::span<const std::uint8_t> key, std::span<const std::uint8_t> message) {
  hmac_sha256_ctx ctx;
  hmac_sha256_set_key(&ctx, key.size(), key.data());
  hmac_sha256_update(&ctx, message.size(), message.data());
  std::vector<std::uint8_t> digest(SHA256_DIGEST_SIZE);
  hmac_sha256_digest(&ctx, digest.size(), digest.data());
  return digest;
}

Result<std::unique_ptr<Authenticator>> SharedKeyAuthenticator::from_key(std::span<const std::uint8_t> key) {
  if (key.size() < kMinKeyBytes || key.size() > kMaxKeyBytes)
    return Status::error("shared key has " + std::to_string(key.size()) + " bytes, expected " +
                         std::to_string(kMinKeyBytes) + " to " + std::to_string(kMaxKeyBytes));
  return std::unique_ptr<Authenticator>(new SharedKeyAuthenticator(std::vector<std::uint8_t>(key.begin(), key.end())));
}

Result<std::unique_ptr<Authenticator>> SharedKeyAuthenticator::from_file(const std::string& path) {
  // O_NONBLOCK: opening a FIFO for reading would wait for a writer.
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
  if (fd < 0) return Status::error("key file " + path + ": " + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return Status::error("key file " + path + ": not a regular file");
  }
  // Another user's key, even 0600, is not this job's secret: whoever owns
  // it may read it (and could have planted it).
  if (st.st_uid != ::geteuid()) {
    ::close(fd);
    return Status::error("key file " + path + " belongs to uid " + std::to_string(st.st_uid) +
                         ", not to the user running vmha (uid " + std::to_string(::geteuid()) + ")");
  }
  if (st.st_mode & 077) {
    ::close(fd);
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
    return Status::error("key file " + path + " is accessible by group or others (mode " + mode + "); run: chmod 600 " +
                         path);
  }
  std::vector<std::uint8_t> key(kMaxKeyBytes + 1);
  std::size_t got = 0;
  while (got < key.size()) {
    ssize_t n = ::read(fd, key.data() + got, key.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int e = errno;
      ::close(fd);
      return Status::error("key file " + path + ": " + std::strerror(e));
    }
    if (n == 0) break;
    got += static_cast<std::size_t>(n);
  }
  ::close(fd);
  key.resize(got);
  auto a = from_key(key);
  if (!a.ok()) return a.status().context("key file " + path + ": ");
  return a;
}

Result<std::vector<std::uint8_t>> SharedKeyAuthenticator::prove(std::string_view role,
                                                                std::span<const std::uint8_t> transcript) const {
  return hmac_sha256(key_, tagged(role, transcript));
}

Status SharedKeyAuthenticator::verify(std::string_view role, std::span<const std::uint8_t> transcript,
                                      std::span<const std::uint8_t> proof) const {
  auto expected = hmac_sha256(key_, tagged(role, transcript));
  if (proof.size() != expected.size() || !nettle_memeql_sec(proof.data(), expected.data(), expected.size()))
    return Status::error("hmac-sha256 proof does not match the job's shared key");
  return {};
}

}  // namespace vmha
