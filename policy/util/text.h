// Small text helpers for names read from files (GPU types, keys): case
// folding as std::tolower does in the C locale (ASCII letters only). Header-only.
#pragma once

#include <cctype>
#include <string>
#include <string_view>

namespace duet {

inline char lower(char c) { return static_cast<char>(std::tolower(static_cast<unsigned char>(c))); }

inline std::string lower(std::string_view s) {
  std::string o(s);
  for (char& c : o) c = lower(c);
  return o;
}

// Equal ignoring ASCII case.
inline bool iequal(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (lower(a[i]) != lower(b[i])) return false;
  return true;
}

}  // namespace duet
