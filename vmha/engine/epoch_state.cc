#include "vmha/engine/epoch_state.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>

#include "vmha/state/byte_stream.h"
#include "vmha/sys/confinement.h"

namespace vmha {

namespace {
// Version 2 added file records (stream 0: path and offset).
constexpr char kMagic[8] = {'V', 'M', 'H', 'A', 'E', 'P', 'O', '2'};

}  // namespace

std::vector<uint8_t> EpochState::encode() const {
  std::vector<uint8_t> out;
  ByteWriter w(out);
  w.bytes(kMagic, 8);
  w.u64(epoch);
  w.u32(flags);
  w.u32(static_cast<uint32_t>(end_kind));
  w.u32(static_cast<uint32_t>(end_code));
  w.u64(released_seq);
  for (int s = 1; s <= 2; ++s) {
    w.u64(streams[s].dev);
    w.u64(streams[s].ino);
    w.u64(streams[s].base_size);
    w.u64(streams[s].released);
  }
  w.u32(static_cast<uint32_t>(held.size()));
  for (const auto& r : held) {
    w.u64(r.seq);
    w.u32(static_cast<uint32_t>(r.stream));
    w.u64(r.stream_pos);
    w.u64(r.bytes.size());
    w.bytes(r.bytes.data(), r.bytes.size());
    if (r.is_file()) w.str(r.path);
  }
  w.u64(vm_state.size());
  w.bytes(vm_state.data(), vm_state.size());
  return out;
}

Status EpochState::decode(std::span<const uint8_t> bytes, EpochState* out) {
  ByteReader r(bytes);
  char magic[8];
  if (!r.bytes(magic, 8, "magic") || std::memcmp(magic, kMagic, 8) != 0)
    return Status::error("checkpoint state: no VMHAEPO2 magic at byte 0");
  EpochState st;
  st.epoch = r.u64("epoch");
  st.flags = r.u32("flags");
  st.end_kind = static_cast<int32_t>(r.u32("end kind"));
  st.end_code = static_cast<int32_t>(r.u32("end code"));
  st.released_seq = r.u64("released sequence");
  for (int s = 1; s <= 2; ++s) {
    st.streams[s].dev = r.u64("stream device");
    st.streams[s].ino = r.u64("stream inode");
    st.streams[s].base_size = r.u64("stream base size");
    st.streams[s].released = r.u64("stream released bytes");
  }
  uint32_t n = r.u32("record count");
  for (uint32_t i = 0; i < n && r.ok(); ++i) {
    OutputRecord rec;
    rec.seq = r.u64("record sequence");
    rec.stream = static_cast<int>(r.u32("record stream"));
    rec.stream_pos = r.u64("record position");
    uint64_t len = r.u64("record length");
    if (r.ok() && (rec.stream < 0 || rec.stream > 2)) r.fail("record stream", "0 (a file), 1 or 2");
    const uint8_t* p = r.ok() ? r.view(len, "record bytes") : nullptr;
    if (p) rec.bytes.assign(p, p + len);
    if (r.ok() && rec.is_file()) {
      rec.path = r.str("record path");
      if (r.ok() && rec.path.empty()) r.fail("record path", "a path relative to the working directory");
    }
    st.held.push_back(std::move(rec));
  }
  uint64_t len = r.u64("VM state length");
  const uint8_t* p = r.ok() ? r.view(len, "VM state") : nullptr;
  if (p) st.vm_state.assign(p, p + len);
  if (r.ok() && !r.at_end()) r.fail("end", "nothing after the VM state");
  if (!r.ok()) return Status::error("checkpoint state " + r.error());
  *out = std::move(st);
  return Status();
}

StreamInfo describe_stream(int fd) {
  StreamInfo s;
  struct stat st;
  if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
    s.dev = st.st_dev;
    s.ino = st.st_ino;
    s.base_size = static_cast<uint64_t>(st.st_size);
  }
  return s;
}

namespace {
// The checkpoint's file writes, again, beneath `workdir`: the same bytes at
// the same offsets, so it does not matter whether the primary wrote them. A
// file that is gone was removed or renamed by a change the guest made after
// these writes had been released (changes wait for that): nothing to do.
Status reapply_file_writes(const EpochState& st, const std::string& workdir, uint64_t* bytes_written) {
  Confinement root;  // the guest's own rules: beneath the working directory
  if (Status s = root.open_root(workdir); !s.ok()) return s;
  std::map<std::string, int> fds;  // path -> fd or -errno
  Status status;
  for (const auto& r : st.held) {
    if (!r.is_file()) continue;
    auto it = fds.find(r.path);
    if (it == fds.end())
      it = fds.emplace(r.path, root.open_beneath(root.root_fd(), r.path, O_WRONLY | O_CLOEXEC, 0)).first;
    if (it->second == -ENOENT) continue;
    if (it->second < 0) {
      status = Status::error("re-applying held writes to " + r.path + ": " + std::strerror(-it->second));
      break;
    }
    if (!pwrite_fully(it->second, r.bytes.data(), r.bytes.size(), r.stream_pos)) {
      status = Status::error(errno_text("re-applying held writes to " + r.path));
      break;
    }
    *bytes_written += r.bytes.size();
  }
  for (auto& [path, fd] : fds)
    if (fd >= 0) close(fd);
  return status;
}
}  // namespace

Status release_unreleased(const EpochState& st, const std::string& workdir, uint64_t* bytes_written) {
  *bytes_written = 0;
  uint64_t released[3] = {0, st.streams[1].released, st.streams[2].released};
  uint64_t in_file[3] = {0, 0, 0};  // released by the file's size (same file only)
  bool same_file[3] = {false, false, false};
  for (int s = 1; s <= 2; ++s) {
    StreamInfo mine = describe_stream(s);
    if (mine.ino != 0 && mine.dev == st.streams[s].dev && mine.ino == st.streams[s].ino) {
      same_file[s] = true;
      in_file[s] = mine.base_size - std::min(mine.base_size, st.streams[s].base_size);
      released[s] = std::max(released[s], in_file[s]);
    }
  }
  // A protected primary releases an epoch's output only once this backup has
  // committed it, so what is out ends within this checkpoint's records. More
  // means the primary lost this backup (an acknowledgement overdue under
  // load), went on unprotected and released output of epochs this image never
  // saw; resuming it would repeat that output, so refuse before writing
  // anything. Only stdout: without --log, vmha's own diagnostics may share
  // stderr's file.
  if (same_file[1]) {
    uint64_t covered = st.streams[1].released;
    for (const auto& r : st.held)
      if (!r.is_file() && r.stream == 1) covered = std::max(covered, r.stream_pos + r.bytes.size());
    if (in_file[1] > covered)
      return Status::error("checkpoint " + std::to_string(st.epoch) +
                           " is older than the output: standard output holds " + std::to_string(in_file[1]) +
                           " bytes of the program, the checkpoint accounts for " + std::to_string(covered) +
                           " (the primary went on without this backup); not resuming, it would repeat output");
  }
  if (Status s = reapply_file_writes(st, workdir, bytes_written); !s.ok()) return s;
  for (const auto& r : st.held) {
    if (r.is_file()) continue;
    uint64_t end = r.stream_pos + r.bytes.size();
    if (end <= released[r.stream]) continue;
    uint64_t skip = released[r.stream] > r.stream_pos ? released[r.stream] - r.stream_pos : 0;
    if (!write_fully(r.stream, r.bytes.data() + skip, r.bytes.size() - skip))
      return Status::error(errno_text("releasing held output"));
    *bytes_written += r.bytes.size() - skip;
  }
  return Status();
}

}  // namespace vmha
