#include "plugins/seam/job_hints.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace duet::plugin {

JobHints parse_job_hints(std::string_view c) {
  JobHints h;
  constexpr std::string_view kPrefix = "duet:";
  if (c.substr(0, kPrefix.size()) != kPrefix) return h;
  c.remove_prefix(kPrefix.size());
  while (!c.empty()) {
    if (c.substr(0, 5) == "type=") {  // the rest of the comment
      std::string_view t = c.substr(5);
      while (!t.empty() && (t.back() == '\n' || t.back() == '\r' || t.back() == ' ')) t.remove_suffix(1);
      h.type = std::string(t);
      break;
    }
    size_t end = c.find(';');
    std::string_view item = c.substr(0, end);
    if (item.substr(0, 4) == "ref=") {
      std::string v(item.substr(4));
      char* stop = nullptr;
      double x = std::strtod(v.c_str(), &stop);
      if (!v.empty() && *stop == '\0' && std::isfinite(x) && x > 0) h.ref_s = x;
    }
    if (end == std::string_view::npos) break;
    c.remove_prefix(end + 1);
  }
  return h;
}

std::string format_job_hints(double ref_s, const std::string& type) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "duet:ref=%.6g", ref_s);
  std::string out = buf;
  if (!type.empty()) out += ";type=" + type;
  return out;
}

}  // namespace duet::plugin
