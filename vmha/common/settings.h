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

// Confinement: the system paths a guest may read (never write) besides its
// working directory, colon-separated (vmha --ro, plugstack.conf ro=).
inline constexpr const char* kDefaultReadOnlyPaths =
    "/usr:/lib:/lib64:/etc/ld.so.cache:/etc/localtime:/usr/share/zoneinfo:/etc/passwd:/etc/group:/etc/nsswitch.conf";

}  // namespace vmha
