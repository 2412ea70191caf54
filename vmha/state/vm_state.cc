// Vm::save and Vm::restore: the VM state format of vm_state.h, walked section
// by section (vm_state_codec.h); the header and end marker codecs live here.
#include "vmha/state/vm_state.h"

#include <cstring>
#include <memory>
#include <string>
#include <unordered_map>

#include "vmha/state/byte_stream.h"
#include "vmha/state/vm_state_codec.h"
#include "vmha/vmm/layout.h"
#include "vmha/vmm/vm.h"

namespace vmha {

using namespace layout;

namespace {

Status read_error(const ByteReader& r) { return Status::error("VM state " + r.error()); }

}  // namespace

void VmStateCodec::encode_header(ByteWriter& w, const Vm& vm) {
  w.bytes(kStateMagic, 8);
  // The lowest version that holds this state: one without private
  // directories or working directories stays readable by a vmha from before
  // version 6, one without program paths (a
  // state restored from before version 5) by a vmha from
  // before version 5, a single process's by one from before version 4, a
  // single-threaded guest's by one from before version 3, one without
  // signal state by one from before version 2.
  const bool places = has_places(vm);
  w.u32(places ? 6 : has_names(vm) ? 5 : has_tree(vm) ? 4 : has_threads(vm) ? 3 : has_signals(vm) ? 2 : 1);
  w.u64(vm.mem_->size());
  // Version 6: the run id (sys/confinement.h), before anything opens a file
  // of the run's (a descriptor in its private /tmp, a held removed file).
  if (places) w.str(vm.tree_->root().root.run_id());
}

Status VmStateCodec::decode_header(ByteReader& r, VmOptions* opts, uint32_t* version_out) {
  char magic[8];
  if (!r.bytes(magic, 8, "magic") || std::memcmp(magic, kStateMagic, 8) != 0)
    return Status::error("not a vmha VM state (no VMHASTAT magic at byte 0)");
  uint32_t version = r.u32("version");
  if (version < 1 || version > kStateVersion)
    return Status::error("VM state version " + std::to_string(version) +
                         " is not supported (this vmha reads versions 1 to " + std::to_string(kStateVersion) + ")");
  *version_out = version;
  opts->memory_bytes = r.u64("memory size");
  if (!r.ok()) return read_error(r);
  if (opts->memory_bytes % (2u << 20))
    return Status::error("VM state: memory size " + std::to_string(opts->memory_bytes) + " is not a multiple of 2 MiB");
  if (Status s = check_memory_mib(opts->memory_bytes >> 20); !s.ok()) return Status::error("VM state: " + s.message());
  if (version >= 6) {
    opts->run_id = r.str("run id");
    if (r.ok() && !opts->run_id.empty() && !valid_run_id(opts->run_id)) r.fail("run id", "empty or 16 hex digits");
    if (!r.ok()) return read_error(r);
  }
  return Status();
}

void VmStateCodec::encode_end(ByteWriter& w) { w.bytes(kStateEndMagic, 8); }

void VmStateCodec::decode_end(ByteReader& r) {
  char end[8];
  if (r.bytes(end, 8, "end marker") && std::memcmp(end, kStateEndMagic, 8) != 0) r.fail("end marker", "VMHAEND!");
  if (r.ok() && !r.at_end()) r.fail("end", "nothing after the end marker");
}

void Vm::adopt_memory() { VmStateCodec::count_shared_frames(*this); }

void VmStateCodec::count_shared_frames(Vm& vm) {
  std::unordered_map<uint64_t, uint32_t> refs;
  for (const auto& q : vm.tree_->all())
    if (!q->zombie && !q->vfork_child)  // a vfork child maps its parent's tables
      q->as->page_table().for_each_user_leaf([&](uint64_t, uint64_t e) {
        if (e & kPteBacked) ++refs[e & kPteFrame];
      });
  std::erase_if(refs, [](const auto& kv) { return kv.second < 2; });
  for (auto& kv : refs) --kv.second;
  vm.mem_->set_shared_frames(std::move(refs));
}

bool VmStateCodec::frame_inside(const Vm& vm, uint64_t gpa) {
  return gpa && gpa % kPageSize == 0 && gpa < vm.mem_->size();
}

Status Vm::save(std::vector<uint8_t>* out, bool with_memory) {
  if (running_.load() && !parked_) return Status::error("save: the vCPU is running (pause it first)");
  out->clear();
  ByteWriter w(*out);
  VmStateCodec::encode_header(w, *this);
  if (Status s = VmStateCodec::encode_vcpu(w, *this); !s.ok()) return s;
  const bool places = VmStateCodec::has_places(*this);
  const bool names = places || VmStateCodec::has_names(*this);
  if (names || VmStateCodec::has_tree(*this)) {
    if (Status s = VmStateCodec::encode_tree(w, *this); !s.ok()) return s;
    if (names) VmStateCodec::encode_names(w, *this);
    if (places) VmStateCodec::encode_places(w, *this);
  } else {
    VmStateCodec::encode_page_tables(w, *this);
    VmStateCodec::encode_mappings(w, *this);
    VmStateCodec::encode_process(w, *this);
    const bool threads = VmStateCodec::has_threads(*this);
    if (threads || VmStateCodec::has_signals(*this)) VmStateCodec::encode_signals(w, *this);
    if (threads) VmStateCodec::encode_threads(w, *this);
    if (Status s = VmStateCodec::encode_fds(w, *this); !s.ok()) return s;
  }
  VmStateCodec::encode_memory(w, *this, with_memory);
  VmStateCodec::encode_end(w);
  return Status();
}

std::string Vm::run_id_of(std::span<const uint8_t> state) {
  ByteReader r(state);
  VmOptions opts;
  uint32_t version = 0;
  return VmStateCodec::decode_header(r, &opts, &version).ok() ? opts.run_id : "";
}

Status Vm::restore(const VmOptions& opts_in, std::span<const uint8_t> state, std::unique_ptr<Vm>* out) {
  ByteReader r(state);
  VmOptions opts = opts_in;
  uint32_t version = 0;
  if (Status s = VmStateCodec::decode_header(r, &opts, &version); !s.ok()) return s;
  // The vCPU record is read before KVM is opened and applied last, once the
  // rest of the state has been read and checked.
  VcpuRecord cpu;
  VmStateCodec::decode_vcpu(r, &cpu);
  if (!r.ok()) return read_error(r);
  if (Status s = check_vcpus(opts.vcpus); !s.ok()) return s;
  std::unique_ptr<Vm> vm(new Vm());
  if (Status s = vm->open_kvm(opts); !s.ok()) return s;
  if (version >= 4) {
    if (Status s = VmStateCodec::decode_tree(r, opts, *vm); !s.ok()) return s;
    if (version >= 5 && r.ok()) VmStateCodec::decode_names(r, *vm);
    if (version >= 6 && r.ok())
      if (Status s = VmStateCodec::decode_places(r, *vm); !s.ok()) return s;
  } else {
    VmStateCodec::decode_page_tables(r, *vm);
    VmStateCodec::decode_mappings(r, *vm);
    VmStateCodec::decode_process(r, *vm);
    if (version >= 2) VmStateCodec::decode_signals(r, *vm);
    if (version >= 3) VmStateCodec::decode_threads(r, *vm);
    if (Status s = VmStateCodec::decode_fds(r, opts, *vm); !s.ok()) return s;
  }
  VmStateCodec::decode_memory(r, *vm);
  VmStateCodec::decode_end(r);
  if (!r.ok()) return read_error(r);
  VmStateCodec::count_shared_frames(*vm);
  if (Status s = VmStateCodec::apply_vcpu(*vm, cpu); !s.ok()) return s;
  *out = std::move(vm);
  return Status();
}

}  // namespace vmha
