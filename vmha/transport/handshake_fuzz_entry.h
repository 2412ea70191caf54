// Fuzzing entry for what the backup does before authentication: `data` is
// taken as every byte a peer sent to a freshly accepted handshake socket; it
// goes through the same frame decoding (FrameReader, with the
// unauthenticated payload limit) and authenticate_as_backup() as a real
// connection, with a fixed shared key. Replies are discarded. Returns 0; it
// must never crash, hang or leak on any input. A libFuzzer target is just:
//
//   extern "C" int LLVMFuzzerTestOneInput(const uint8_t* d, size_t n) {
//     return vmha_fuzz_backup_handshake(d, n);
//   }
#pragma once

#include <cstddef>
#include <cstdint>

extern "C" int vmha_fuzz_backup_handshake(const std::uint8_t* data, std::size_t size);
