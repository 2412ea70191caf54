// Which network devices UCX may use. UCX's tcp transport opens a listening
// socket on every device it uses as soon as a worker exists, and UCX 1.13
// aborts the whole process on some malformed input to those sockets. vmha
// therefore creates its UCX worker only after authentication and, unless the
// user set UCX_NET_DEVICES, restricts UCX to the interface that carries the
// address it was told to use (plus RDMA ports, which open no sockets).
#pragma once

#include <string>

#include "vmha/common/status.h"

namespace vmha {

// The interface whose address the host in `address` ("host" or "host:port")
// is, or through which this host reaches it. Empty for the wildcard
// address 0.0.0.0 (every interface).
Result<std::string> interface_for_address(const std::string& address);

// UCX_NET_DEVICES value: `interface` plus every RDMA port found under
// `sysfs`/class/infiniband (e.g. "eth0,mlx5_0:1").
std::string ucx_net_devices(const std::string& interface, const std::string& sysfs = "/sys");

}  // namespace vmha
