#include "vmha/sys/process.h"

#include <unistd.h>

namespace vmha {

void Process::log_once(uint64_t key, const std::string& message) {
  if (!logged.insert(key).second || !log_unsupported) return;
  std::string line = log_prefix + message + "\n";
  ssize_t n = ::write(STDERR_FILENO, line.data(), line.size());
  (void)n;
}

}  // namespace vmha
