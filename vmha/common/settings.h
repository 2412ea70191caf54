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

// A connection silent this long counts as gone, on both sides: the backup
// stops waiting for checkpoints, the primary for an acknowledgement (it then
// tells the backup to stand down and goes on unprotected). Both send
// heartbeats every half lease, also while waiting, so a live peer is never
// silent this long; only the peer's own slowness (a loaded host) can make it.
inline constexpr int kSilentLeases = 5;
inline constexpr int kMinSilenceMs = 2000;
constexpr int silence_limit_ms(int lease_ms) {
  return kSilentLeases * lease_ms > kMinSilenceMs ? kSilentLeases * lease_ms : kMinSilenceMs;
}

// The backup's start: connecting, then storing checkpoint 1 (the whole loaded
// program, before it runs). Nothing is held yet, so a slow backup (a loaded
// host) costs only start-up time here, while giving up on it fails the job.
inline constexpr int kStartupLimitMs = 10000;
constexpr int startup_limit_ms(int lease_ms) {
  return silence_limit_ms(lease_ms) > kStartupLimitMs ? silence_limit_ms(lease_ms) : kStartupLimitMs;
}

// Confinement: the system paths a guest may read (never write) besides its
// working directory, colon-separated (vmha --ro, plugstack.conf ro=): what
// the programs of a stock Debian 12 read. Merged-/usr's /bin, /sbin, /lib*
// name /usr's directories; /etc/alternatives holds the links that commands
// and libraries (awk, libblas.so.3) go through; then the /etc files and
// directories common tools read (git, ssl clients, perl's and python's
// site configuration, terminfo, locales, mime types, pip, fonts), the CPU
// description programs size their thread pools by. Not /etc as a whole, not
// /etc/ssl (private keys). A path missing on the host is skipped. /tmp and
// /dev/shm are not here: each run has private ones (sys/confinement.h).
inline constexpr const char* kDefaultReadOnlyPaths =
    "/usr:/bin:/sbin:/lib:/lib32:/lib64:/libx32:/etc/alternatives:"
    "/etc/ld.so.cache:/etc/localtime:/etc/timezone:/usr/share/zoneinfo:"
    "/etc/passwd:/etc/group:/etc/nsswitch.conf:/etc/hosts:/etc/host.conf:/etc/services:/etc/protocols:/etc/gai.conf:"
    "/etc/os-release:/etc/debian_version:/etc/gitconfig:/etc/ssl/certs:/etc/ssl/openssl.cnf:/etc/ca-certificates.conf:"
    "/etc/mime.types:/etc/mailcap:/etc/magic:/etc/terminfo:/etc/inputrc:/etc/locale.alias:/etc/default/locale:"
    "/etc/perl:/etc/python3:/etc/python3.11:/etc/pip.conf:/etc/xdg:/etc/fonts:/etc/matplotlibrc:/etc/papersize:"
    "/proc/cpuinfo:/sys/devices/system/cpu";

}  // namespace vmha
