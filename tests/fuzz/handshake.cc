// Fuzz target: what the backup does with a peer's bytes before that peer has
// authenticated (frame reading with the unauthenticated payload limit, then
// authenticate_as_backup with a fixed key), through the backup's own entry
// point (vmha/transport/handshake_fuzz_entry.h). Nothing may crash or hang.
#include "tests/fuzz/fuzz_target.h"
#include "vmha/transport/handshake_fuzz_entry.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return vmha_fuzz_backup_handshake(data, size);
}
