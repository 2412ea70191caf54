#include "plugins/spank/lib/hostlist.h"

#include <cstdio>

namespace vmha_spank {

namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }

// Expands "prefix[ranges]suffix" (one bracket group) or a plain name.
bool expand_one(const std::string& item, size_t offset, std::vector<std::string>* out, std::string* error) {
  auto open = item.find('[');
  if (open == std::string::npos) {
    if (item.find(']') != std::string::npos) {
      *error = "column " + std::to_string(offset + item.find(']') + 1) + ": ']' without '['";
      return false;
    }
    out->push_back(item);
    return true;
  }
  auto close = item.find(']', open);
  if (close == std::string::npos) {
    *error = "column " + std::to_string(offset + open + 1) + ": '[' without ']'";
    return false;
  }
  std::string prefix = item.substr(0, open), suffix = item.substr(close + 1);
  std::string ranges = item.substr(open + 1, close - open - 1);
  size_t pos = 0;
  while (pos <= ranges.size()) {
    size_t comma = ranges.find(',', pos);
    if (comma == std::string::npos) comma = ranges.size();
    std::string r = ranges.substr(pos, comma - pos);
    size_t col = offset + open + 2 + pos;
    auto dash = r.find('-');
    std::string lo = r.substr(0, dash), hi = dash == std::string::npos ? lo : r.substr(dash + 1);
    bool digits = !lo.empty() && !hi.empty();
    for (char c : lo + hi) digits = digits && is_digit(c);
    if (!digits) {
      *error = "column " + std::to_string(col) + ": expected a number or a range N-M, got '" + r + "'";
      return false;
    }
    unsigned long a = std::stoul(lo), b = std::stoul(hi);
    if (b < a || b - a > 100000) {
      *error = "column " + std::to_string(col) + ": range '" + r + "' runs backwards or is too long";
      return false;
    }
    for (unsigned long v = a; v <= b; ++v) {
      char num[32];
      std::snprintf(num, sizeof num, "%0*lu", static_cast<int>(lo.size()), v);
      std::vector<std::string> rest;
      if (!expand_one(prefix + num + suffix, offset, &rest, error)) return false;
      out->insert(out->end(), rest.begin(), rest.end());
    }
    pos = comma + 1;
  }
  return true;
}

}  // namespace

bool expand_hostlist(const std::string& list, std::vector<std::string>* hosts, std::string* error) {
  hosts->clear();
  size_t start = 0;
  int depth = 0;
  for (size_t i = 0; i <= list.size(); ++i) {
    char c = i < list.size() ? list[i] : ',';
    if (c == '[') ++depth;
    if (c == ']') --depth;
    if (c != ',' || (depth > 0 && i < list.size())) continue;
    std::string item = list.substr(start, i - start);
    if (item.empty()) {
      *error = "column " + std::to_string(i + 1) + ": empty host name";
      return false;
    }
    if (!expand_one(item, start, hosts, error)) return false;
    start = i + 1;
  }
  return true;
}

std::string pick_backup_node(const std::vector<std::string>& nodes, const std::string& self,
                             const std::string& policy) {
  if (policy == "last") {
    for (auto it = nodes.rbegin(); it != nodes.rend(); ++it)
      if (*it != self) return *it;
    return "";
  }
  size_t n = nodes.size(), me = n;
  for (size_t i = 0; i < n; ++i)
    if (nodes[i] == self) me = i;
  for (size_t k = 1; k <= n; ++k) {
    const std::string& cand = nodes[(me == n ? k - 1 : me + k) % n];
    if (cand != self) return cand;
  }
  return "";
}

}  // namespace vmha_spank
