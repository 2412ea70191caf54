#include "vmha/cli/diagnostics_log.h"

#include <cstdio>

namespace vmha {

bool redirect_diagnostics(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "a");
  if (!f) return false;
  std::setvbuf(f, nullptr, _IOLBF, 0);
  // glibc documents stdin/stdout/stderr as assignable variables; every
  // diagnostic of vmha goes through `stderr`, the guest's writes go to fd 2.
  stderr = f;
  return true;
}

}  // namespace vmha
