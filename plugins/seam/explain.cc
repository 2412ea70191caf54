#include "plugins/seam/explain.h"

#include <cstdio>
#include <cstring>

namespace duet::plugin {

bool explain_owned(const char* c) {
  return !c || !*c || std::strncmp(c, kExplainPrefix.data(), kExplainPrefix.size()) == 0;
}

std::string explain_rank(size_t rank, size_t count, double score, const std::string& scorer) {
  char buf[96];
  if (rank == 0)  // at submit: ranked for real at the next re-score
    std::snprintf(buf, sizeof buf, " score %.6g at submit by ", score);
  else
    std::snprintf(buf, sizeof buf, " rank %zu/%zu score %.6g by ", rank, count, score);
  return std::string(kExplainPrefix) + buf + scorer;
}

std::string explain_placement(const char* current, const std::vector<std::string>& nodes, const std::string& reason) {
  std::string base = current && *current ? current : std::string(kExplainPrefix);
  if (auto cut = base.find("; nodes "); cut != std::string::npos) base.resize(cut);
  std::string list;
  for (const std::string& n : nodes) list += (list.empty() ? "" : ",") + n;
  return base + "; nodes " + list + ": " + reason;
}

}  // namespace duet::plugin
