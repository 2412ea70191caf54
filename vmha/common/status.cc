#include "vmha/common/status.h"

#include <cerrno>
#include <cstring>

namespace vmha {

std::string errno_text(const std::string& what) { return what + ": " + std::strerror(errno); }

}  // namespace vmha
