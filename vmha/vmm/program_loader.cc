#include "vmha/vmm/program_loader.h"

#include <elf.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "vmha/vmm/layout.h"

namespace vmha {

using namespace layout;

namespace {
int prot_of(uint32_t pf) {
  return ((pf & PF_R) ? PROT_READ : 0) | ((pf & PF_W) ? PROT_WRITE : 0) | ((pf & PF_X) ? PROT_EXEC : 0);
}

// Maps each segment at base + its address and copies its file bytes in.
// *phdr_va: where the program headers landed (0: in no segment); *highest:
// the end of the highest segment.
Status map_segments(const ElfImage& img, const std::string& exec_name, uint64_t base, AddressSpace& as,
                    uint64_t* phdr_va, uint64_t* highest) {
  for (const ElfSegment& s : img.segments) {
    uint64_t start = page_down(base + s.vaddr), end = page_up(base + s.vaddr + s.memsz);
    // Pages shared by two segments get the union of their permissions.
    int prot = prot_of(s.flags);
    for (const auto& [vstart, v] : as.vmas())
      if (v.start < end && v.end > start) prot |= v.prot;
    if (!as.map_fixed(start, end, prot | PROT_WRITE, MAP_PRIVATE | MAP_FIXED))
      return Status::error(exec_name + ": guest memory exhausted while loading segment at " + std::to_string(s.vaddr));
    if (s.filesz && !as.copy_out(base + s.vaddr, img.bytes.data() + s.offset, s.filesz))
      return Status::error(exec_name + ": cannot copy segment at " + std::to_string(s.vaddr));
    if (as.protect(start, end - start, prot) != 0)
      return Status::error(exec_name + ": cannot protect segment at " + std::to_string(s.vaddr));
    if (img.phoff >= s.offset && img.phoff < s.offset + s.filesz) *phdr_va = base + s.vaddr + (img.phoff - s.offset);
    *highest = std::max(*highest, end);
  }
  return Status();
}

// Where the strings and the program headers were put on the stack.
struct StackStrings {
  uint64_t execfn = 0, platform = 0, random = 0, phdr_va = 0;
  std::vector<uint64_t> argv, envp;
};

// argc, argv, envp and the auxiliary vector, as Linux lays them out below
// the strings.
std::vector<uint64_t> pointer_block(const ElfImage& img, uint64_t base, uint64_t interp_base, uint64_t hwcap,
                                    const StackStrings& at) {
  std::vector<uint64_t> block;
  block.push_back(at.argv.size());
  block.insert(block.end(), at.argv.begin(), at.argv.end());
  block.push_back(0);
  block.insert(block.end(), at.envp.begin(), at.envp.end());
  block.push_back(0);
  auto aux = [&](uint64_t k, uint64_t v) {
    block.push_back(k);
    block.push_back(v);
  };
  aux(AT_PHDR, at.phdr_va);
  aux(AT_PHENT, img.phentsize);
  aux(AT_PHNUM, img.phnum);
  aux(AT_PAGESZ, kPageSize);
  aux(AT_BASE, interp_base);
  aux(AT_FLAGS, 0);
  aux(AT_ENTRY, base + img.entry);
  aux(AT_UID, getuid());
  aux(AT_EUID, geteuid());
  aux(AT_GID, getgid());
  aux(AT_EGID, getegid());
  aux(AT_SECURE, 0);
  aux(AT_RANDOM, at.random);
  aux(AT_HWCAP, hwcap);
  aux(AT_HWCAP2, 0);
  aux(AT_CLKTCK, 100);
  aux(AT_PLATFORM, at.platform);
  aux(AT_EXECFN, at.execfn);
  aux(AT_NULL, 0);
  if (block.size() % 2) block.push_back(0);  // keep rsp 16-byte aligned at entry
  return block;
}

// Where the interpreter goes: a free range of its size, top-down in the
// mmap area (the kernel maps it like a first mmap). Returns the load base.
Status place_interpreter(const ElfImage& interp, const std::string& name, AddressSpace& as, uint64_t* base) {
  if (!interp.pie) return Status();  // ET_EXEC: at its own addresses
  uint64_t lo = ~0ull, hi = 0;
  for (const ElfSegment& s : interp.segments) {
    lo = std::min(lo, page_down(s.vaddr));
    hi = std::max(hi, page_up(s.vaddr + s.memsz));
  }
  int64_t at = as.map(0, hi - lo, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS);
  if (at < 0) return Status::error(name + ": no room in guest memory for the interpreter");
  as.unmap(static_cast<uint64_t>(at), hi - lo);
  *base = static_cast<uint64_t>(at) - lo;
  return Status();
}

}  // namespace

Status read_interpreter(const Confinement& policy, const ElfImage& program, const std::string& exec_name,
                        ElfImage* out) {
  const std::string& path = program.interpreter;
  const std::string what = exec_name + ": interpreter " + path;
  int fd = policy.open_for_reading(path);
  if (fd == -EACCES) {
    std::string ro;
    for (const std::string& r : policy.read_only_paths()) ro += (ro.empty() ? "" : " ") + r;
    return Status::error(what +
                         " is outside the confinement policy (vmha confines the program to its working "
                         "directory and the read-only paths: " +
                         (ro.empty() ? "none" : ro) + "); allow it with --ro DIR");
  }
  if (fd < 0) return Status::error(what + ": " + std::strerror(-fd));
  ElfImage img;
  Status s = read_elf_fd(fd, what, &img);
  close(fd);
  if (!s.ok()) return s;
  if (!img.interpreter.empty()) return Status::error(what + " names an interpreter itself (" + img.interpreter + ")");
  *out = std::move(img);
  return Status();
}

Status load_program(const ElfImage& img, const ElfImage* interp, const std::string& exec_name,
                    const std::vector<std::string>& argv, const std::vector<std::string>& envp, uint64_t hwcap,
                    AddressSpace& as, LoadedProgram* out) {
  uint64_t base = img.pie ? kPieBase : 0;
  uint64_t highest = 0;
  StackStrings at;
  if (Status s = map_segments(img, exec_name, base, as, &at.phdr_va, &highest); !s.ok()) return s;
  as.init_brk(highest);

  uint64_t interp_base = 0, entry = base + img.entry;
  if (interp) {
    const std::string name = exec_name + ": interpreter " + img.interpreter;
    uint64_t unused_phdr = 0, interp_end = 0;
    if (Status s = place_interpreter(*interp, name, as, &interp_base); !s.ok()) return s;
    if (Status s = map_segments(*interp, name, interp_base, as, &unused_phdr, &interp_end); !s.ok()) return s;
    entry = interp_base + interp->entry;
  }

  if (!as.map_fixed(kStackTop - kStackSize, kStackTop, PROT_READ | PROT_WRITE,
                    MAP_PRIVATE | MAP_ANONYMOUS | MAP_GROWSDOWN))
    return Status::error(exec_name + ": guest memory exhausted while mapping the stack");

  // Strings at the top of the stack, then the pointer block below them.
  uint64_t sp = kStackTop - 16;
  auto push_bytes = [&](const void* p, size_t n) {
    sp -= n;
    as.copy_out(sp, p, n);
    return sp;
  };
  auto push_string = [&](const std::string& s) { return push_bytes(s.c_str(), s.size() + 1); };
  at.execfn = push_string(exec_name);
  for (const auto& a : argv) at.argv.push_back(push_string(a));
  for (const auto& e : envp) at.envp.push_back(push_string(e));
  at.platform = push_string("x86_64");
  uint8_t random_bytes[16];
  if (getrandom(random_bytes, sizeof random_bytes, 0) != sizeof random_bytes)
    for (int i = 0; i < 16; ++i) random_bytes[i] = static_cast<uint8_t>(i * 37 + 11);
  at.random = push_bytes(random_bytes, sizeof random_bytes);
  if (!at.phdr_va) at.phdr_va = push_bytes(img.bytes.data() + img.phoff, size_t(img.phnum) * img.phentsize);
  sp &= ~uint64_t(15);

  std::vector<uint64_t> block = pointer_block(img, base, interp_base, hwcap, at);
  sp -= block.size() * 8;
  if (!as.copy_out(sp, block.data(), block.size() * 8))
    return Status::error(exec_name + ": arguments and environment do not fit on the 8 MiB stack");
  out->entry = entry;
  out->stack_pointer = sp;
  return Status();
}

}  // namespace vmha
