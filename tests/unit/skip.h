// A Check test that cannot run here is reported as skipped, never passed.
// Check itself knows only pass and fail, so SKIP_UNLESS prints one line
//   SKIP: <test>: <reason>
// to the suite's log and returns from the test; contrib/test-summary moves
// each such line from the suite's passed tests to the run's skipped ones.
// (A whole suite that cannot run exits 77 from main, Automake's SKIP.)
//
// DUET_TEST_WITHOUT=python3,root,kvm,... makes the named prerequisites
// missing for the tests, so that a run can show its skips are counted.
#pragma once
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace test_support {

// Whether DUET_TEST_WITHOUT (comma-separated) names `what`.
inline bool pretend_missing(const std::string& what) {
  const char* env = std::getenv("DUET_TEST_WITHOUT");
  if (!env) return false;
  const std::string list = std::string(",") + env + ",";
  return list.find("," + what + ",") != std::string::npos;
}

// An executable at `path`, unless DUET_TEST_WITHOUT names its file name.
inline bool have_program(const std::string& path) {
  return access(path.c_str(), X_OK) == 0 && !pretend_missing(path.substr(path.rfind('/') + 1));
}

inline bool is_root() { return geteuid() == 0 && !pretend_missing("root"); }

// The marker line; `fn` is the test's function (START_TEST(x) defines x_fn).
// stderr is unbuffered: a forked test's line is written once, before it exits.
inline void report_skip(const char* fn, const std::string& reason) {
  std::string name = fn;
  if (name.size() > 3 && name.compare(name.size() - 3, 3, "_fn") == 0) name.resize(name.size() - 3);
  std::fprintf(stderr, "SKIP: %s: %s\n", name.c_str(), reason.c_str());
}

}  // namespace test_support

// In a START_TEST body: unless `cond`, report the test skipped and return.
#define SKIP_UNLESS(cond, reason)                           \
  do {                                                      \
    if (!(cond)) {                                          \
      ::test_support::report_skip(__func__, (reason));      \
      return;                                               \
    }                                                       \
  } while (0)
