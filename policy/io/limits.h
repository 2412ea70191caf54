// Limits on every input the readers accept (documented in duet-trace(5),
// duet-cluster(5)): a value outside them is refused with file and line
// rather than passed on to hang the simulator or to lie in its results.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace duet {

// Durations and submit times: at most 10 years (365-day years) in seconds.
// Far above any real trace, and small enough that adding a timer step of a
// second to a simulated time never rounds away.
inline constexpr double kMaxTraceSeconds = 10.0 * 365 * 86400;  // 315,360,000
// GPUs one job asks for / one machine holds.
inline constexpr std::int64_t kMaxJobGpus = 1 << 20;
inline constexpr std::int64_t kMaxMachineGpus = 1024;
// Relative speeds (cluster `speed` column, node speeds file): vs the reference GPU.
inline constexpr double kMinSpeed = 1e-3;
inline constexpr double kMaxSpeed = 1e3;
// GPU types in one cluster: job type masks are 64-bit.
inline constexpr int kMaxGpuTypes = 64;
// A name (GPU type, node) as a converter may write it into a trace, cluster
// or node speeds file: 1 to 256 bytes of printable ASCII without spaces, '|'
// (which joins GPU types), ',' or '"'. Slurm's node names and GRES types
// (gres.conf Type=) are of this kind.
inline constexpr char kPlainNameRule[] = "printable characters without spaces, '|', ',' or '\"'";
inline bool plain_name_ok(std::string_view t) {
  if (t.empty() || t.size() > 256) return false;
  for (char c : t)
    if (c <= ' ' || c >= 0x7f || c == '|' || c == ',' || c == '"') return false;
  return true;
}
// CSV input: enforced while reading, so an endless line is never held in memory.
inline constexpr std::size_t kMaxCsvLineBytes = std::size_t{1} << 20;      // 1 MiB
inline constexpr std::size_t kMaxCsvFieldBytes = std::size_t{64} << 10;    // 64 KiB
inline constexpr std::uint64_t kMaxCsvFileBytes = std::uint64_t{4} << 30;  // 4 GiB

}  // namespace duet
