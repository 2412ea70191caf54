#include "policy/learn/train/store_key.h"

#include <nettle/hmac.h>

#include <cstdint>
#include <stdexcept>

namespace duet::learn {

std::string store_key_prefix(std::string_view secret, std::string_view scope) {
  if (secret.size() < kMinStoreSecretBytes)
    throw std::invalid_argument("workers: the store's secret has " + std::to_string(secret.size()) +
                                " bytes, at least " + std::to_string(kMinStoreSecretBytes) + " are needed");
  std::string message = "duet-train-store v1";
  message.push_back('\0');
  message.append(scope);
  hmac_sha256_ctx ctx;
  hmac_sha256_set_key(&ctx, secret.size(), reinterpret_cast<const std::uint8_t*>(secret.data()));
  hmac_sha256_update(&ctx, message.size(), reinterpret_cast<const std::uint8_t*>(message.data()));
  std::uint8_t digest[SHA256_DIGEST_SIZE];
  hmac_sha256_digest(&ctx, sizeof digest, digest);
  static const char kHex[] = "0123456789abcdef";
  std::string out = "duet-train/";
  for (std::uint8_t b : digest) {
    out.push_back(kHex[b >> 4]);
    out.push_back(kHex[b & 15]);
  }
  return out;
}

}  // namespace duet::learn
