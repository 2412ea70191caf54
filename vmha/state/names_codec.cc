// The names section of the VM state (version 5): each process's program path
// (/proc/self/exe, sys/proc_views.h), in the tree section's order. Written
// after the tree section, which a version 5 state always has.
#include <limits.h>

#include <cstring>

#include "vmha/state/vm_state_codec.h"

namespace vmha {

namespace {

constexpr char kNamesMagic[8] = {'V', 'M', 'H', 'A', 'N', 'A', 'M', 'E'};

}  // namespace

bool VmStateCodec::has_names(const Vm& vm) {
  for (const auto& q : vm.tree_->all())
    if (!q->exe.empty()) return true;
  return false;
}

void VmStateCodec::encode_names(ByteWriter& w, const Vm& vm) {
  w.bytes(kNamesMagic, 8);
  const auto& all = vm.tree_->all();
  w.u32(static_cast<uint32_t>(all.size()));
  for (const auto& q : all) w.str(q->exe);
}

void VmStateCodec::decode_names(ByteReader& r, Vm& vm) {
  char magic[8];
  if (r.bytes(magic, 8, "names section") && std::memcmp(magic, kNamesMagic, 8) != 0)
    r.fail("names section", "VMHANAME");
  const auto& all = vm.tree_->all();
  const uint32_t n = r.u32("program path count");
  if (r.ok() && n != all.size()) r.fail("program path count", "the tree's process count");
  for (uint32_t i = 0; i < n && r.ok(); ++i) {
    std::string exe = r.str("program path");
    if (r.ok() && (exe.size() >= PATH_MAX || exe.find('\0') != std::string::npos || (!exe.empty() && exe[0] != '/')))
      r.fail("program path", "empty or an absolute path without NUL, shorter than PATH_MAX");
    if (r.ok()) all[i]->exe = std::move(exe);
  }
}

}  // namespace vmha
