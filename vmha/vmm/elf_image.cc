#include "vmha/vmm/elf_image.h"

#include <elf.h>
#include <sys/stat.h>
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstring>

namespace vmha {

namespace {
Status bad(const std::string& name, const std::string& what) {
  return Status::error(name + ": not a runnable x86-64 ELF executable: " + what);
}
}  // namespace

Status parse_elf(std::vector<uint8_t> bytes, const std::string& name, ElfImage* out) {
  if (bytes.size() < sizeof(Elf64_Ehdr)) return bad(name, "file is shorter than an ELF header");
  Elf64_Ehdr eh;
  std::memcpy(&eh, bytes.data(), sizeof eh);
  if (std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0) return bad(name, "no ELF magic (\\x7fELF) at offset 0");
  if (eh.e_ident[EI_CLASS] != ELFCLASS64) return bad(name, "not a 64-bit ELF (EI_CLASS)");
  if (eh.e_ident[EI_DATA] != ELFDATA2LSB) return bad(name, "not little-endian (EI_DATA)");
  if (eh.e_machine != EM_X86_64)
    return bad(name, "machine is " + std::to_string(eh.e_machine) + ", expected x86-64 (62)");
  if (eh.e_type != ET_EXEC && eh.e_type != ET_DYN)
    return bad(name, "ELF type " + std::to_string(eh.e_type) + " is not an executable");
  if (eh.e_phentsize != sizeof(Elf64_Phdr))
    return bad(name, "program header entry size " + std::to_string(eh.e_phentsize) + ", expected 56");
  if (eh.e_phnum == 0 || eh.e_phnum > 256)
    return bad(name, "program header count " + std::to_string(eh.e_phnum) + " out of range 1..256");
  if (eh.e_phoff > bytes.size() || bytes.size() - eh.e_phoff < uint64_t(eh.e_phnum) * sizeof(Elf64_Phdr))
    return bad(name, "program headers at offset " + std::to_string(eh.e_phoff) + " run past the end of the file");
  ElfImage img;
  img.pie = eh.e_type == ET_DYN;
  img.entry = eh.e_entry;
  img.phoff = eh.e_phoff;
  img.phnum = eh.e_phnum;
  img.phentsize = eh.e_phentsize;
  for (int i = 0; i < eh.e_phnum; ++i) {
    Elf64_Phdr ph;
    std::memcpy(&ph, bytes.data() + eh.e_phoff + i * sizeof ph, sizeof ph);
    std::string where = "program header " + std::to_string(i);
    if (ph.p_type == PT_INTERP) {
      // A path, NUL-terminated within the header's size (Linux: ENOEXEC otherwise).
      if (ph.p_offset > bytes.size() || bytes.size() - ph.p_offset < ph.p_filesz || ph.p_filesz > PATH_MAX)
        return bad(name, where + ": interpreter path (PT_INTERP) runs past the end of the file or is too long");
      const char* p = reinterpret_cast<const char*>(bytes.data() + ph.p_offset);
      if (ph.p_filesz == 0 || p[ph.p_filesz - 1] != 0 || p[0] == 0)
        return bad(name, where + ": interpreter path (PT_INTERP) is empty or not NUL-terminated");
      if (!img.interpreter.empty()) return bad(name, "more than one interpreter (PT_INTERP)");
      img.interpreter = p;
      continue;
    }
    if (ph.p_type != PT_LOAD) continue;
    if (ph.p_filesz > ph.p_memsz) return bad(name, where + ": file size exceeds memory size");
    if (ph.p_offset > bytes.size() || bytes.size() - ph.p_offset < ph.p_filesz)
      return bad(name, where + ": segment runs past the end of the file");
    if ((ph.p_vaddr & 4095) != (ph.p_offset & 4095))
      return bad(name, where + ": address and offset disagree modulo the page size");
    if (ph.p_memsz > (1ull << 40) || ph.p_vaddr > (1ull << 46))
      return bad(name, where + ": segment outside the user address space");
    img.segments.push_back({ph.p_vaddr, ph.p_memsz, ph.p_offset, ph.p_filesz, ph.p_flags});
  }
  if (img.segments.empty()) return bad(name, "no loadable segment (PT_LOAD)");
  img.bytes = std::move(bytes);
  *out = std::move(img);
  return Status();
}

Status read_elf_fd(int fd, const std::string& name, ElfImage* out) {
  struct stat st;
  if (fstat(fd, &st) != 0) return Status::error(errno_text(name));
  if (!S_ISREG(st.st_mode)) return Status::error(name + ": not a regular file (Permission denied)");
  // Read at the size the file has (a compiler is tens of MB): no growth.
  std::vector<uint8_t> bytes(static_cast<size_t>(st.st_size));
  size_t got = 0;
  for (;;) {
    if (got == bytes.size()) bytes.resize(bytes.size() + 65536);  // it grew meanwhile
    ssize_t n = pread(fd, bytes.data() + got, bytes.size() - got, static_cast<off_t>(got));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Status::error(errno_text(name));
    if (n == 0) break;
    got += static_cast<size_t>(n);
  }
  bytes.resize(got);
  return parse_elf(std::move(bytes), name, out);
}

Status read_elf_file(const std::string& path, ElfImage* out) {
  // O_NONBLOCK: a FIFO would wait for a writer (read_elf_fd refuses it).
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return Status::error(errno_text(path));
  Status s = read_elf_fd(fd, path, out);
  close(fd);
  return s;
}

}  // namespace vmha
