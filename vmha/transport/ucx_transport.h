// UCX (UCP API) implementation of the transport seam.
//
// Which UCX transports carry the data is UCX's choice, restricted by
// UcxOptions::transports (same syntax as the UCX_TLS environment variable, which
// applies when the option is empty):
//   ""         UCX's choice (default): on one host shared memory (posix/sysv);
//              with a loopback network_address vmha picks "sm,self" itself
//   "sm,self"  one host, shared memory only, no UCX socket
//   "tcp"      between hosts; one-sided reads are emulated by the primary's
//              worker, which is why the primary runs a progress thread
//   "rc,ud" / "rc_x,dc_x" (or UCX's default "all") where an RDMA NIC exists:
//              ucp_get_nbx becomes RDMA READ, the primary's CPU is not involved.
// Connections: the backup listens on a plain TCP socket bound exactly to
// host:port; vmha's own handshake authenticates both sides on it; only then
// does each side create its UCX worker, and the two exchange worker addresses
// on that socket and connect UCX endpoints from them. UCX's connection manager
// never listens, and nothing UCX parses is reachable before authentication.
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include "vmha/transport/transport.h"

namespace vmha {

struct UcxOptions {
  std::string transports;  // UCX_TLS value; empty: environment / UCX default
  // The address this side listens on (backup) or connects to (primary). Unless
  // UCX_NET_DEVICES is set, UCX may use only the network interface that
  // carries it (and RDMA ports): its tcp transport listens on every device it
  // uses. Empty, or 0.0.0.0: all devices. A loopback address with no
  // transport list (here or in UCX_TLS) selects "sm,self": no UCX socket.
  std::string network_address;
  // Primary (connect()): progress the worker from a background thread, which
  // emulated one-sided reads (tcp) need while the guest runs. The backup
  // progresses from the threads that pull and receive.
  bool progress_thread = true;
  // Most one-sided reads in flight per pull().
  std::size_t max_outstanding_reads = 128;
  // Bound for one handshake and for one send.
  std::chrono::milliseconds handshake_timeout{5000};
  std::chrono::milliseconds send_timeout{10000};
  std::chrono::milliseconds pull_timeout{30000};
};

Result<std::unique_ptr<Transport>> make_ucx_transport(const UcxOptions& options);

}  // namespace vmha
