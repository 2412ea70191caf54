// Mutual challenge-response on a fresh channel (before any memory is exposed):
//
//   primary -> backup  Hello{method, nonce_p}
//   backup -> primary  Challenge{nonce_b, proof("backup", nonce_p || nonce_b)}
//   primary -> backup  Response{proof("primary", nonce_p || nonce_b)}
//   backup -> primary  AuthResult{accepted | refused + reason}
//
// Fresh random nonces on both sides make every proof single-use; each side
// checks the other's proof, so neither a fake backup nor a fake primary learns
// anything that would let it pass later.
#pragma once

#include <chrono>

#include "vmha/common/status.h"
#include "vmha/transport/auth.h"
#include "vmha/transport/transport.h"

namespace vmha {

Status authenticate_as_primary(Channel& channel, const Authenticator& auth, std::chrono::milliseconds timeout);
Status authenticate_as_backup(Channel& channel, const Authenticator& auth, std::chrono::milliseconds timeout);

}  // namespace vmha
