// Renders untrusted bytes (file contents, names read from files) safe to put
// into an error message or a log line: a terminal escape or a newline from a
// crafted file must not reach the operator's terminal or forge log lines.
// Header-only: used by the policy, learn and plugin libraries alike.
#pragma once

#include <string>
#include <string_view>

namespace duet {

// Printable ASCII stays as is; a backslash becomes "\\"; every other byte
// (control characters, DEL, bytes >= 0x80) becomes "\xHH".
inline std::string printable(std::string_view s) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(s.size());
  for (char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    if (c == '\\') {
      out += "\\\\";
    } else if (c >= 0x20 && c < 0x7f) {
      out += ch;
    } else {
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

}  // namespace duet
