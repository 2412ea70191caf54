// Corpus replay for one fuzz target, built with the project's compiler (no
// clang or libFuzzer): runs LLVMFuzzerTestOneInput on every file of the given
// directories, or by default of tests/fuzz/corpus/<target> and
// tests/fuzz/crashes/<target>. A crash, abort or uncaught exception kills the
// program (the test fails) after it names the input it was on; an input
// running longer than FUZZ_REPLAY_TIMEOUT seconds (default 60) counts as a hang.
//
//   replay_<target> [-v] [DIR|FILE]...
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "tests/fuzz/fuzz_target.h"

#ifndef FUZZ_TARGET_NAME
#error "FUZZ_TARGET_NAME must name the target (\"trace\")"
#endif
#ifndef FUZZ_SRCDIR
#define FUZZ_SRCDIR "."
#endif

namespace fs = std::filesystem;

namespace {

// What a signal handler prints: fixed buffers, set before each input.
char g_current[4096] = "(before the first input)";

void say(const char* s) {
  std::size_t n = std::strlen(s);
  while (n > 0) {
    ssize_t w = write(STDERR_FILENO, s, n);
    if (w <= 0) return;
    s += w;
    n -= static_cast<std::size_t>(w);
  }
}

void on_fatal_signal(int sig) {
  say("replay " FUZZ_TARGET_NAME ": FAILED on ");
  say(g_current);
  say(sig == SIGALRM ? " (hang: timeout)\n" : ": fatal signal ");
  if (sig != SIGALRM) {
    say(strsignal(sig));  // not async-signal-safe in theory; we are dying anyway
    say("\n");
  }
  if (sig == SIGALRM) _exit(1);
  signal(sig, SIG_DFL);
  raise(sig);
}

// Names the exception before abort() so the log says what escaped.
void on_terminate() {
  say("replay " FUZZ_TARGET_NAME ": uncaught exception");
  if (auto e = std::current_exception()) {
    try {
      std::rethrow_exception(e);
    } catch (const std::exception& x) {
      say(": ");
      say(x.what());
    } catch (...) {}
  }
  say("\n");
  std::abort();
}

void install_handlers() {
  for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGALRM}) signal(sig, on_fatal_signal);
  std::set_terminate(on_terminate);
}

bool hidden(const fs::path& p) {
  const std::string n = p.filename().string();
  return n.empty() || n[0] == '.' || n.rfind("README", 0) == 0;
}

// Regular files under `root` (a file counts as itself), sorted, dotfiles and READMEs left out.
std::vector<fs::path> inputs_of(const fs::path& root) {
  std::vector<fs::path> out;
  std::error_code ec;
  if (fs::is_regular_file(root, ec)) return {root};
  if (!fs::is_directory(root, ec)) return out;
  for (const auto& e : fs::recursive_directory_iterator(root, ec))
    if (e.is_regular_file() && !hidden(e.path())) out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

void run_one(const fs::path& p, unsigned timeout_s, bool verbose) {
  std::snprintf(g_current, sizeof g_current, "%s", p.c_str());
  if (verbose) std::fprintf(stderr, "replay " FUZZ_TARGET_NAME ": %s\n", p.c_str());
  std::ifstream in(p, std::ios::binary);
  if (!in) {
    std::fprintf(stderr, "replay " FUZZ_TARGET_NAME ": cannot read %s\n", p.c_str());
    std::exit(1);
  }
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  // Own copy of exactly `size` bytes, as libFuzzer passes, so overreads are not masked.
  std::vector<std::uint8_t> data(bytes.begin(), bytes.end());
  alarm(timeout_s);
  LLVMFuzzerTestOneInput(data.data(), data.size());
  alarm(0);
}

}  // namespace

int main(int argc, char** argv) {
  install_handlers();
  bool verbose = false;
  std::vector<fs::path> roots;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "-v") == 0)
      verbose = true;
    else
      roots.emplace_back(argv[i]);
  }
  if (roots.empty()) {
    const char* env = std::getenv("top_srcdir");
    const fs::path top = env && *env ? env : FUZZ_SRCDIR;
    roots = {top / "tests/fuzz/corpus" / FUZZ_TARGET_NAME, top / "tests/fuzz/crashes" / FUZZ_TARGET_NAME};
    if (!fs::is_directory(roots[0])) {
      std::fprintf(stderr, "replay " FUZZ_TARGET_NAME ": no seed corpus at %s\n", roots[0].c_str());
      return 1;
    }
  }
  unsigned timeout_s = 60;
  if (const char* t = std::getenv("FUZZ_REPLAY_TIMEOUT")) timeout_s = static_cast<unsigned>(std::atoi(t));

  std::size_t total = 0;
  for (const auto& root : roots) {
    const auto files = inputs_of(root);
    for (const auto& f : files) run_one(f, timeout_s, verbose);
    std::printf("replay %s: %zu inputs from %s passed\n", FUZZ_TARGET_NAME, files.size(), root.c_str());
    total += files.size();
  }
  std::printf("replay %s: %zu inputs in all, none crashed\n", FUZZ_TARGET_NAME, total);
  return 0;
}
