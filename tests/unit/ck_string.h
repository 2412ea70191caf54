// String equality for Check suites: ck_assert_str_eq would keep a dangling
// c_str() of a temporary std::string, so both sides are copied first.
#pragma once
#include <check.h>

#include <string>

#define CK_STR_EQ(a, b)                                              \
  do {                                                               \
    std::string _a = (a), _b = (b);                                  \
    ck_assert_msg(_a == _b, "'%s' != '%s'", _a.c_str(), _b.c_str()); \
  } while (0)
