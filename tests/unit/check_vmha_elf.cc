// The ELF checks run before any VM exists: malformed files are refused with a
// message naming the problem; a dynamically linked executable names its
// interpreter (PT_INTERP), which the loader then loads beside it.
#include <elf.h>

#include <cstring>
#include <string>
#include <vector>

#include "vmha/vmm/elf_image.h"

#include <check.h>
#include "tests/unit/run_suite.h"

using namespace vmha;

namespace {

// A minimal valid static executable image: header + one PT_LOAD.
std::vector<uint8_t> minimal_elf() {
  std::vector<uint8_t> b(4096 + 16, 0);
  Elf64_Ehdr eh{};
  std::memcpy(eh.e_ident, ELFMAG, SELFMAG);
  eh.e_ident[EI_CLASS] = ELFCLASS64;
  eh.e_ident[EI_DATA] = ELFDATA2LSB;
  eh.e_ident[EI_VERSION] = EV_CURRENT;
  eh.e_type = ET_EXEC;
  eh.e_machine = EM_X86_64;
  eh.e_version = EV_CURRENT;
  eh.e_entry = 0x401000;
  eh.e_phoff = sizeof eh;
  eh.e_ehsize = sizeof eh;
  eh.e_phentsize = sizeof(Elf64_Phdr);
  eh.e_phnum = 1;
  std::memcpy(b.data(), &eh, sizeof eh);
  Elf64_Phdr ph{};
  ph.p_type = PT_LOAD;
  ph.p_flags = PF_R | PF_X;
  ph.p_offset = 4096;
  ph.p_vaddr = 0x401000;
  ph.p_filesz = 16;
  ph.p_memsz = 16;
  std::memcpy(b.data() + sizeof eh, &ph, sizeof ph);
  return b;
}

std::string refusal(std::vector<uint8_t> b) {
  ElfImage img;
  Status s = parse_elf(std::move(b), "prog", &img);
  return s.ok() ? "" : s.message();
}

bool contains(const std::string& s, const char* what) { return s.find(what) != std::string::npos; }

START_TEST(minimal_static_elf_is_accepted) {
  ElfImage img;
  Status s = parse_elf(minimal_elf(), "prog", &img);
  ck_assert_msg(s.ok(), "%s", s.message().c_str());
  ck_assert_int_eq(static_cast<int>(img.segments.size()), 1);
  ck_assert(!img.pie);
}
END_TEST

START_TEST(truncated_and_bad_magic_are_refused) {
  ck_assert(contains(refusal({0x7f, 'E', 'L'}), "shorter than an ELF header"));
  auto b = minimal_elf();
  b[1] = 'X';
  ck_assert(contains(refusal(b), "no ELF magic"));
  b = minimal_elf();
  b[EI_CLASS] = ELFCLASS32;
  ck_assert(contains(refusal(b), "not a 64-bit ELF"));
}
END_TEST

START_TEST(wrong_machine_is_refused) {
  auto b = minimal_elf();
  uint16_t arm = EM_AARCH64;
  std::memcpy(b.data() + offsetof(Elf64_Ehdr, e_machine), &arm, 2);
  ck_assert(contains(refusal(b), "expected x86-64"));
}
END_TEST

START_TEST(segments_past_the_file_are_refused) {
  auto b = minimal_elf();
  uint64_t big = 1 << 20;
  std::memcpy(b.data() + sizeof(Elf64_Ehdr) + offsetof(Elf64_Phdr, p_filesz), &big, 8);
  std::memcpy(b.data() + sizeof(Elf64_Ehdr) + offsetof(Elf64_Phdr, p_memsz), &big, 8);
  ck_assert(contains(refusal(b), "past the end of the file"));
  b = minimal_elf();
  uint64_t off = 1ull << 40;
  std::memcpy(b.data() + offsetof(Elf64_Ehdr, e_phoff), &off, 8);
  ck_assert(contains(refusal(b), "program headers"));
}
END_TEST

START_TEST(dynamic_executable_names_its_interpreter) {
  auto b = minimal_elf();
  // A second program header, PT_INTERP, pointing at a path.
  const char* interp = "/lib64/ld-linux-x86-64.so.2";
  std::memcpy(b.data() + 4000, interp, std::strlen(interp) + 1);
  Elf64_Phdr ph{};
  ph.p_type = PT_INTERP;
  ph.p_offset = 4000;
  ph.p_filesz = std::strlen(interp) + 1;
  std::memcpy(b.data() + sizeof(Elf64_Ehdr) + sizeof(Elf64_Phdr), &ph, sizeof ph);
  uint16_t two = 2;
  std::memcpy(b.data() + offsetof(Elf64_Ehdr, e_phnum), &two, 2);
  ElfImage img;
  Status s = parse_elf(b, "prog", &img);
  ck_assert_msg(s.ok(), "%s", s.message().c_str());
  ck_assert_str_eq(img.interpreter.c_str(), interp);
  ck_assert_int_eq(static_cast<int>(img.segments.size()), 1);
  // Not NUL-terminated within its size, empty, or past the end: refused.
  auto c = b;
  c[4000 + std::strlen(interp)] = 'x';
  ck_assert_msg(contains(refusal(c), "PT_INTERP"), "%s", refusal(c).c_str());
  c = b;
  c[4000] = 0;
  ck_assert_msg(contains(refusal(c), "empty"), "%s", refusal(c).c_str());
  c = b;
  uint64_t far = 1 << 20;
  std::memcpy(c.data() + sizeof(Elf64_Ehdr) + sizeof(Elf64_Phdr) + offsetof(Elf64_Phdr, p_offset), &far, 8);
  ck_assert_msg(contains(refusal(c), "past the end of the file"), "%s", refusal(c).c_str());
}
END_TEST

START_TEST(real_dynamic_binary_names_ld_so) {
  ElfImage img;
  Status s = read_elf_file("/bin/sh", &img);
  ck_assert_msg(s.ok(), "%s", s.message().c_str());
  if (img.interpreter.empty()) return;  // a static /bin/sh
  ck_assert_msg(contains(img.interpreter, "ld-linux"), "%s", img.interpreter.c_str());
}
END_TEST

START_TEST(missing_file_names_it) {
  ElfImage img;
  Status s = read_elf_file("/nonexistent/prog", &img);
  ck_assert(!s.ok());
  ck_assert(contains(s.message(), "/nonexistent/prog"));
}
END_TEST

}  // namespace

int main() {
  Suite* s = suite_create("vmha_elf");
  TCase* tc = tcase_create("parse");
  tcase_set_timeout(tc, 60);  // Check's default, 4 s, fails on a loaded host
  tcase_add_test(tc, minimal_static_elf_is_accepted);
  tcase_add_test(tc, truncated_and_bad_magic_are_refused);
  tcase_add_test(tc, wrong_machine_is_refused);
  tcase_add_test(tc, segments_past_the_file_are_refused);
  tcase_add_test(tc, dynamic_executable_names_its_interpreter);
  tcase_add_test(tc, real_dynamic_binary_names_ld_so);
  tcase_add_test(tc, missing_file_names_it);
  suite_add_tcase(s, tc);
  return test_support::run_suite(s);
}
