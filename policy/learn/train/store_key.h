// The key prefix of the training workers' rendezvous store when they are on
// several hosts (workers.h). Torch-free.
//
// Why a prefix: LibTorch 1.13's c10d TCPStore listens on every interface of
// worker 0's host and checks no credential; it cannot be bound to one
// address, and anyone who reaches the port may get, set, add and delete any
// key by name. Gloo's rendezvous (each worker's connection addresses) goes
// through it, so a stranger who could name the keys could read them or
// redirect a worker's connections, and so the gradients. The protocol has no
// command that lists keys: every key the workers use is put under a prefix
// derived from a secret only the job's user holds (duet train
// --store-secret, tools/duet/train_secret.cc), HMAC-SHA256(secret,
// "duet-train-store v1" NUL scope) in hex, where the scope names the run
// (the Slurm job and step), so a prefix seen once is good for nothing else.
// A client without the secret can connect, but cannot find, read or write
// any key of the run; a worker with another secret finds no greeting under
// its prefix and is refused (workers.cc). The traffic is not encrypted: on a
// network where others can read it, the prefix is visible (as Gloo's
// traffic is); run the workers on a network others cannot listen to.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace duet::learn {

inline constexpr std::size_t kMinStoreSecretBytes = 16;

// "duet-train/" + 64 hex digits. Throws std::invalid_argument for a secret
// shorter than kMinStoreSecretBytes.
std::string store_key_prefix(std::string_view secret, std::string_view scope);

}  // namespace duet::learn
