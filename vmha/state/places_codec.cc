// The places section of the VM state (version 6): each process's working
// directory (its recorded path and whether it is under a read-only root),
// in the tree section's order. Written after the names section; the run id
// of the private /tmp and /dev/shm (sys/confinement.h) is in the header.
// Decoding goes through this VMM's policy: a working directory the policy
// does not hold is refused, as a read-only file of the fd table is.
#include <limits.h>

#include <cstring>

#include "vmha/state/vm_state_codec.h"

namespace vmha {

namespace {

constexpr char kPlacesMagic[8] = {'V', 'M', 'H', 'A', 'P', 'L', 'C', 'E'};

}  // namespace

bool VmStateCodec::has_places(const Vm& vm) {
  for (const auto& q : vm.tree_->all())
    if (!q->root.run_id().empty() || q->root.cwd().recorded != ".") return true;
  return false;
}

void VmStateCodec::encode_places(ByteWriter& w, const Vm& vm) {
  w.bytes(kPlacesMagic, 8);
  const auto& all = vm.tree_->all();
  w.u32(static_cast<uint32_t>(all.size()));
  for (const auto& q : all) {
    w.str(q->root.cwd().recorded);
    w.u32(q->root.cwd().read_only ? 1 : 0);
  }
}

Status VmStateCodec::decode_places(ByteReader& r, Vm& vm) {
  char magic[8];
  if (r.bytes(magic, 8, "places section") && std::memcmp(magic, kPlacesMagic, 8) != 0)
    r.fail("places section", "VMHAPLCE");
  const auto& all = vm.tree_->all();
  const uint32_t n = r.u32("working directory count");
  if (r.ok() && n != all.size()) r.fail("working directory count", "the tree's process count");
  for (uint32_t i = 0; i < n && r.ok(); ++i) {
    Process& q = *all[i];
    std::string cwd = r.str("working directory");
    const uint32_t ro = r.u32("working directory flags");
    if (r.ok() && (cwd.empty() || cwd.size() >= PATH_MAX || cwd.find('\0') != std::string::npos || ro > 1 ||
                   (ro == 1) != (cwd[0] == '/')))
      r.fail("working directory", "a path without NUL, absolute exactly when read-only");
    if (!r.ok() || cwd == ".") continue;
    Located l;
    int rc = ro ? q.root.locate(cwd, &l) : 0;
    if (!ro) l = Located{q.root.root_fd(), cwd, false, cwd};
    if (rc == 0 && (l.read_only != (ro == 1) || (!ro && q.root.reserved(cwd)))) rc = -EACCES;
    if (rc == 0) rc = q.root.change_dir(l);
    if (rc < 0)
      return Status::error("cannot restore the working directory " + cwd + " of guest process " +
                           std::to_string(q.pid) + ": " + std::strerror(-rc));
  }
  return Status();
}

}  // namespace vmha
