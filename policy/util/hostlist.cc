#include "policy/util/hostlist.h"

#include <cstdio>

namespace duet {

namespace {

constexpr unsigned long long kMaxRange = 100000;
constexpr std::size_t kMaxDigits = 18;  // any such number fits an unsigned long long

bool is_digit(char c) { return c >= '0' && c <= '9'; }

unsigned long long to_number(const std::string& digits) {
  unsigned long long v = 0;
  for (char c : digits) v = v * 10 + static_cast<unsigned long long>(c - '0');
  return v;
}

struct Output {
  std::vector<std::string>* names;
  std::size_t bytes = 0;
};

// Expands "prefix[ranges]rest" (rest may hold more bracket groups) or a plain name.
bool expand_one(const std::string& item, std::size_t offset, Output& out, std::string* error) {
  const auto open = item.find('[');
  if (open == std::string::npos) {
    if (item.find(']') != std::string::npos) {
      *error = "column " + std::to_string(offset + item.find(']') + 1) + ": ']' without '['";
      return false;
    }
    out.bytes += item.size();
    if (out.names->size() >= kMaxHostlistNames || out.bytes > kMaxHostlistBytes) {
      *error = "expands to more than " + std::to_string(kMaxHostlistNames) + " names or " +
               std::to_string(kMaxHostlistBytes >> 20) + " MiB";
      return false;
    }
    out.names->push_back(item);
    return true;
  }
  const auto close = item.find(']', open);
  if (close == std::string::npos) {
    *error = "column " + std::to_string(offset + open + 1) + ": '[' without ']'";
    return false;
  }
  const std::string prefix = item.substr(0, open), suffix = item.substr(close + 1);
  const std::string ranges = item.substr(open + 1, close - open - 1);
  std::size_t pos = 0;
  while (pos <= ranges.size()) {
    std::size_t comma = ranges.find(',', pos);
    if (comma == std::string::npos) comma = ranges.size();
    const std::string r = ranges.substr(pos, comma - pos);
    const std::size_t col = offset + open + 2 + pos;
    const auto dash = r.find('-');
    const std::string lo = r.substr(0, dash), hi = dash == std::string::npos ? lo : r.substr(dash + 1);
    bool digits = !lo.empty() && !hi.empty();
    for (char c : lo + hi) digits = digits && is_digit(c);
    if (!digits) {
      *error = "column " + std::to_string(col) + ": expected a number or a range N-M, got '" + r + "'";
      return false;
    }
    if (lo.size() > kMaxDigits || hi.size() > kMaxDigits) {
      *error = "column " + std::to_string(col) + ": a number of more than " + std::to_string(kMaxDigits) + " digits";
      return false;
    }
    const unsigned long long a = to_number(lo), b = to_number(hi);
    if (b < a || b - a > kMaxRange) {
      *error = "column " + std::to_string(col) + ": range '" + r + "' runs backwards or is too long";
      return false;
    }
    for (unsigned long long v = a; v <= b; ++v) {
      char num[32];
      std::snprintf(num, sizeof num, "%0*llu", static_cast<int>(lo.size()), v);  // node[01-10]
      if (!expand_one(prefix + num + suffix, offset, out, error)) return false;
    }
    pos = comma + 1;
  }
  return true;
}

}  // namespace

bool expand_hostlist(const std::string& list, std::vector<std::string>* hosts, std::string* error) {
  hosts->clear();
  Output out{hosts};
  std::size_t start = 0;
  int depth = 0;
  for (std::size_t i = 0; i <= list.size(); ++i) {
    const char c = i < list.size() ? list[i] : ',';
    if (c == '[') ++depth;
    if (c == ']') --depth;
    if (c != ',' || (depth > 0 && i < list.size())) continue;
    const std::string item = list.substr(start, i - start);
    if (item.empty()) {
      *error = "column " + std::to_string(i + 1) + ": empty host name";
      return false;
    }
    std::size_t groups = 0;
    for (char g : item) groups += g == '[';
    if (groups > kMaxHostlistGroups) {
      *error = "column " + std::to_string(start + 1) + ": more than " + std::to_string(kMaxHostlistGroups) +
               " bracket groups in one name";
      return false;
    }
    if (!expand_one(item, start, out, error)) return false;
    start = i + 1;
  }
  return true;
}

}  // namespace duet
