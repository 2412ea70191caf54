// UCX (UCP API) implementation of the transport seam.
//
// Which UCX transports carry the data is UCX's choice, restricted by
// UcxOptions::transports (same syntax as the UCX_TLS environment variable, which
// applies when the option is empty):
//   ""         UCX's choice (default): on one host shared memory (posix/sysv)
//   "sm,self,tcp"  one host, shared memory only for data
//   "tcp"      between hosts; one-sided reads are emulated by the primary's
//              worker, which is why the primary runs a progress thread
// An explicit list must contain tcp: UCX 1.13 makes host:port connections
// through its TCP connection manager ("sm,self" alone cannot connect).
//   "rc,ud" / "rc_x,dc_x" (or UCX's default "all") where an RDMA NIC exists:
//              ucp_get_nbx becomes RDMA READ, the primary's CPU is not involved.
// Connections are made with a UCX listener on host:port (sockaddr, TCP).
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include "vmha/transport/transport.h"

namespace vmha {

struct UcxOptions {
  std::string transports;  // UCX_TLS value; empty: environment / UCX default
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
