// A plugin's small state file in Slurm's StateSaveLocation: written so that
// a crash at any moment (SIGKILL of slurmctld, power loss) leaves either the
// old or the new file whole, and read only when it may be trusted
// (file_trust.h: whoever can change it would steer the scheduler).
// Slurm-free: the plugin passes the path and SlurmUser's uid in.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace duet::plugin {

// Writes `bytes` to PATH.new (mode 0600), fsyncs it, renames it over `path`
// and fsyncs the directory. False and *error on any failure (PATH.new is
// then removed, `path` unchanged).
bool write_state_file(const std::string& path, std::string_view bytes, std::string* error);

enum class StateRead {
  kRead,     // *bytes holds the file
  kMissing,  // no file: a first start
  kRefused,  // *error says why (untrusted, not a regular file, too big, I/O)
};

// Reads `path` when file_trusted() for `slurm_user_uid` and at most
// `max_bytes` long.
StateRead read_state_file(const std::string& path, std::uint32_t slurm_user_uid, size_t max_bytes, std::string* bytes,
                          std::string* error);

}  // namespace duet::plugin
