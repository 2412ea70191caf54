#include <cstdint>

#include "vmha/sys/syscall_table.h"

namespace vmha {

namespace {

struct Name {
  uint64_t nr;
  const char* name;
};

// {41, "socket"}, ... generated from <sys/syscall.h> (vmha/sys/Makefile.inc).
constexpr Name kNames[] = {
#include "vmha/sys/linux_syscall_names.inc"
};

}  // namespace

const char* linux_syscall_name(uint64_t nr) {
  for (const Name& n : kNames)
    if (n.nr == nr) return n.name;
  return "";
}

}  // namespace vmha
