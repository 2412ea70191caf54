// The replication settings' defaults and ranges, one definition each: vmha
// run and backup, the engine, the bench and the SPANK plugin's plugstack
// arguments all use these (vmha(1), vmha_spank(8)).
#pragma once

namespace vmha {

inline constexpr int kDefaultEpochMs = 50;  // longest epoch
inline constexpr int kMinEpochMs = 1;
inline constexpr int kMaxEpochMs = 60000;

// Silence after which either side counts the other lost.
inline constexpr int kDefaultLeaseMs = 500;
inline constexpr int kMinLeaseMs = 50;
inline constexpr int kMaxLeaseMs = 60000;

}  // namespace vmha
