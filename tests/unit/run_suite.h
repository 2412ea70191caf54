// Runs a Check suite and gives main() its exit status: one runner for every
// unit suite instead of five lines of srunner calls in each.
#pragma once
#include <check.h>

namespace test_support {

inline int run_suite(Suite* s) {
  SRunner* sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  const int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? 1 : 0;
}

}  // namespace test_support
