#include "vmha/engine/guest_exit.h"

#include <signal.h>
#include <sys/resource.h>

#include <cstdio>

namespace vmha {

int exit_like_guest(const RunResult& r, const char* who) {
  switch (r.end) {
    case RunResult::End::kExited:
      return r.code;
    case RunResult::End::kSignaled: {
      if (!r.message.empty()) std::fprintf(stderr, "%s: guest killed by %s\n", who, r.message.c_str());
      std::fflush(nullptr);
      rlimit no_core{0, 0};
      setrlimit(RLIMIT_CORE, &no_core);
      signal(r.code, SIG_DFL);
      sigset_t set;
      sigemptyset(&set);
      sigaddset(&set, r.code);
      sigprocmask(SIG_UNBLOCK, &set, nullptr);
      raise(r.code);
      return 128 + r.code;
    }
    case RunResult::End::kStopped:
      std::fprintf(stderr, "%s: guest stopped before it finished\n", who);
      return 125;
    case RunResult::End::kFailed:
      break;
  }
  std::fprintf(stderr, "%s: %s\n", who, r.message.c_str());
  return 125;
}

}  // namespace vmha
